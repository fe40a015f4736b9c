// State cards drawn over the canvas (Cytoscape draws no HTML): title, first message, the input as a chip,
// a row per button with its port, start/final marks and issue badges. Only the states in and around the view
// get a card, and only once the zoom makes a card legible; zoomed out, the canvas shows titles, then plain
// boxes (style.js). Cards let the pointer through to the canvas, except on their ports.
import { t } from "../i18n.js";
import { renderMarkup } from "../markup.js";

/** Zoom from which cards are drawn (12px text is then 6px or more on screen). */
export const CARD_ZOOM = 0.5;
const SETTLE = 90;  // ms after the view stops moving before cards come and go
const MIRRORED = ["start", "final", "waiting", "issue-error", "issue-warning", "sim-current", "diff-added", "diff-removed", "diff-changed",
                  "fn-heat-1", "fn-heat-2", "fn-heat-3", "fn-heat-4", "fn-leak"];

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

export class CardLayer {
  /** `onPort(node, portKey, mouseEvent)` starts a transition from a port; without it, cards have no ports. */
  constructor(cy, wrap, onPort) {
    this.cy = cy;
    this.onPort = onPort;
    this.layer = el("div", "card-layer");
    this.plane = el("div", "card-plane");
    this.layer.append(this.plane);
    wrap.append(this.layer);
    this.cards = new Map();  // node id -> card element
    this.counts = new Map();  // state id -> number of issues
    this.timer = null;
    this.framePending = false;
    this.shown = false;
    cy.on("viewport", () => { this.frame(); clearTimeout(this.timer); this.timer = setTimeout(() => this.update(), SETTLE); });
    cy.on("resize", () => this.update());
    cy.on("position", "node", (e) => this.place(e.target));
    cy.on("data", "node", (e) => this.refresh(e.target));
    cy.on("remove", "node", (e) => this.drop(e.target.id()));
    cy.on("add", "node", () => { clearTimeout(this.timer); this.timer = setTimeout(() => this.update(), 0); });
    cy.on("select unselect class", "node", (e) => this.mirror(e.target));
    this.plane.addEventListener("mousedown", (e) => {
      const port = e.target.closest && e.target.closest(".port");
      if (!port || e.button !== 0) return;
      const node = cy.getElementById(port.closest(".card").dataset.node);
      if (node.nonempty()) this.onPort(node, port.dataset.port, e);
    });
    this.update();
  }

  /** Follow the view: one transform for the whole layer, at most once a frame. */
  frame() {
    if (this.framePending) return;
    this.framePending = true;
    requestAnimationFrame(() => {
      this.framePending = false;
      const pan = this.cy.pan();
      this.plane.style.transform = `translate(${pan.x}px, ${pan.y}px) scale(${this.cy.zoom()})`;
      const show = this.cy.zoom() >= CARD_ZOOM;
      if (show !== this.shown) this.update();
    });
  }

  /** Make cards for the states in and near the view, drop the others. */
  update() {
    const cy = this.cy;
    this.shown = cy.zoom() >= CARD_ZOOM;
    this.layer.hidden = !this.shown;
    const pan = cy.pan();
    this.plane.style.transform = `translate(${pan.x}px, ${pan.y}px) scale(${cy.zoom()})`;
    if (!this.shown) {
      for (const id of [...this.cards.keys()]) this.drop(id);
      return;
    }
    const ext = cy.extent();
    const mx = ext.w / 3;
    const my = ext.h / 3;
    const keep = new Set();
    cy.nodes().forEach((n) => {
      const card = n.data("card");
      if (!card) return;
      const p = n.position();
      if (p.x + card.w / 2 < ext.x1 - mx || p.x - card.w / 2 > ext.x2 + mx) return;
      if (p.y + card.h / 2 < ext.y1 - my || p.y - card.h / 2 > ext.y2 + my) return;
      keep.add(n.id());
      if (!this.cards.has(n.id())) this.make(n);
    });
    for (const id of [...this.cards.keys()]) if (!keep.has(id)) this.drop(id);
  }

  make(node) {
    const div = el("div", "card");
    div.dataset.node = node.id();
    this.cards.set(node.id(), div);
    this.fill(div, node);
    this.place(node);
    this.mirror(node);
    this.plane.append(div);
  }

  drop(id) {
    const div = this.cards.get(id);
    if (div) div.remove();
    this.cards.delete(id);
  }

  /** Redraw a card whose state changed. */
  refresh(node) {
    const div = this.cards.get(node.id());
    if (!div) return;
    this.fill(div, node);
    this.place(node);
  }

  fill(div, node) {
    const card = node.data("card");
    const head = el("div", "card-head");
    head.append(el("span", "card-title", card.title));
    const sid = node.data("sid");
    const count = this.counts.get(sid) || 0;
    if (count) {
      const badge = el("span", "card-badge", String(count));
      badge.title = t("{n} issues", { n: count });
      head.append(badge);
    }
    head.append(el("span", "card-mark card-mark-start", t("Start")), el("span", "card-mark card-mark-final", t("Final")));
    const parts = [head];
    if (card.message) {
      const msg = el("div", `card-msg lines-${card.lines}${card.fallback ? " untranslated" : ""}`,
        card.markup ? undefined : card.message);
      if (card.fallback) msg.title = t("Not translated: the default language's text is shown");
      if (card.markup) {  // flattened to one run of text, as the plain card shows it, in its markup
        if (card.message.startsWith("▣")) msg.append("▣ ");
        msg.append(renderMarkup(card.markup.text.replace(/\s*\n\s*/g, card.markup.format === "html" ? " " : "\n"),
                                card.markup.format));
      }
      parts.push(msg);
    }
    for (const row of card.rows) {
      const r = el("div", `card-row card-${row.kind}`);
      r.style.top = `${row.top}px`;
      if (row.kind === "input") r.append(el("span", "chip", row.text));
      else r.append(el("span", `card-button-text${row.fallback ? " untranslated" : ""}`, row.text));
      if (row.port && this.onPort) {
        const port = el("span", "port");
        port.dataset.port = row.port;
        port.title = row.kind === "input" ? t("Drag to a state: a transition on valid input")
          : t("Drag to a state: a transition on this button");
        r.append(port);
      }
      parts.push(r);
    }
    div.replaceChildren(...parts);
    div.style.width = `${card.w}px`;
    div.style.height = `${card.h}px`;
  }

  place(node) {
    const div = this.cards.get(node.id());
    if (!div) return;
    const card = node.data("card");
    const p = node.position();
    div.style.left = `${p.x - card.w / 2}px`;
    div.style.top = `${p.y - card.h / 2}px`;
  }

  mirror(node) {
    const div = this.cards.get(node.id());
    if (!div) return;
    for (const cls of MIRRORED) div.classList.toggle(cls, node.hasClass(cls));
    div.classList.toggle("selected", node.selected());
  }

  /** Issue counts per state (from the issues list), shown as badges. */
  setIssues(issues) {
    const counts = new Map();
    for (const issue of issues) for (const sid of issue.states || []) counts.set(sid, (counts.get(sid) || 0) + 1);
    const changed = new Set([...counts.keys(), ...this.counts.keys()].filter((k) => counts.get(k) !== this.counts.get(k)));
    this.counts = counts;
    for (const sid of changed) {
      const node = this.cy.getElementById(`s:${sid}`);
      if (node.nonempty()) this.refresh(node);
    }
  }
}
