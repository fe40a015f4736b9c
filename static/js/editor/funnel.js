// The editor's Funnel panel: a bot serving this flow, a version (and one to compare with), a period; the
// answer of GET /api/bots/{bot}/funnel is painted on the graph (funnel-draw.js) and offered as CSV.
import { t, lang } from "../i18n.js";
import { api } from "../api.js";
import { languageNames } from "./language.js";
import { paint, unpaint, indexed, details } from "./funnel-draw.js";

const DAY = 86400000;
const MAX_DAYS = 400;  // the longest period the server counts (server/runtime/funnel_api.py)

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

const isoDate = (time) => {
  const d = new Date(time);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, "0")}-${String(d.getDate()).padStart(2, "0")}`;
};

/** Figure badges under the states, following the view like the cards do. */
class Badges {
  constructor(cy, wrap) {
    this.cy = cy;
    this.layer = el("div", "funnel-layer");
    this.plane = el("div", "card-plane");
    this.layer.append(this.plane);
    wrap.append(this.layer);
    this.texts = new Map();
    this.shown = new Map();  // state id -> its badge
    cy.on("viewport resize", () => this.follow());
    cy.on("position", "node", (e) => this.move(e.target));
  }

  follow() {
    const pan = this.cy.pan();
    this.plane.style.transform = `translate(${pan.x}px, ${pan.y}px) scale(${this.cy.zoom()})`;
  }

  show(texts) {
    this.texts = texts;
    this.layer.hidden = false;
    this.place();
  }

  place() {
    if (this.layer.hidden) return;
    this.plane.replaceChildren();
    this.shown.clear();
    this.cy.nodes().forEach((node) => {
      const text = this.texts.get(node.data("sid"));
      if (!text) return;
      const badge = el("div", "funnel-badge", text);
      badge.dataset.state = node.data("sid");
      this.shown.set(node.data("sid"), badge);
      this.plane.append(badge);
      this.move(node);
    });
    this.follow();
  }

  /** Keep one state's badge under it (a drag moves one state at a time). */
  move(node) {
    const badge = this.shown.get(node.data("sid"));
    if (!badge) return;
    const p = node.position();
    badge.style.left = `${p.x}px`;
    badge.style.top = `${p.y + node.height() / 2 + 4}px`;
  }

  hide() {
    this.layer.hidden = true;
    this.plane.replaceChildren();
    this.shown.clear();
  }
}

export class FunnelView {
  constructor(cy, root, flowId) {
    this.cy = cy;
    this.root = root;
    this.flowId = flowId;
    this.form = root.querySelector("[data-funnel-form]");
    this.bot = root.querySelector("[data-funnel-bot]");
    this.version = root.querySelector("[data-funnel-version]");
    this.compare = root.querySelector("[data-funnel-compare]");
    this.language = root.querySelector("[data-funnel-language]");
    this.from = root.querySelector("[data-funnel-from]");
    this.to = root.querySelector("[data-funnel-to]");
    this.csv = root.querySelector("[data-funnel-csv]");
    this.status = root.querySelector("[data-funnel-status]");
    this.summary = root.querySelector("[data-funnel-summary]");
    this.badges = new Badges(cy, cy.container().parentElement);
    this.tip = el("div", "funnel-tip");
    this.tip.hidden = true;
    cy.container().parentElement.append(this.tip);
    this.sides = null;
    this.bots = [];
    this.loaded = null;
    this.armsNote = "";
    this.setDays(7);
    this.form.addEventListener("submit", (e) => { e.preventDefault(); this.show(); });
    this.form.addEventListener("change", () => this.linkCsv());
    this.bot.addEventListener("change", () => this.pickBot());
    for (const button of root.querySelectorAll("[data-funnel-days]")) {
      button.addEventListener("click", () => { this.setDays(Number(button.dataset.funnelDays)); this.show(); });
    }
    cy.on("mouseover", "node, edge", (e) => this.hover(e));
    const hide = () => { this.tip.hidden = true; };
    cy.on("mouseout", "node, edge", hide);
    cy.on("viewport", hide);
    // Leaving the canvas straight onto a panel over it sends Cytoscape no mouseout.
    cy.container().addEventListener("mouseleave", hide);
  }

  get open() { return !this.root.hidden; }

  /** The language filter lists the flow's languages (hidden for a flow in one language). */
  syncLanguages() {
    if (!this.language) return;
    const doc = window.botflowEditor?.store?.doc;
    const codes = doc && Array.isArray(doc.languages) ? doc.languages.filter((c) => typeof c === "string") : [];
    this.language.closest("[data-funnel-language-wrap]").hidden = codes.length < 2;
    const kept = this.language.value;
    const names = languageNames();
    this.language.replaceChildren(new Option(t("All languages"), ""), ...codes.map((code) => new Option(names(code), code)));
    this.language.value = codes.includes(kept) ? kept : "";
  }

  async toggle() {
    this.root.hidden = !this.root.hidden;
    this.syncLanguages();
    document.querySelector("[data-action=funnel]").setAttribute("aria-pressed", String(this.open));
    if (!this.open) {
      unpaint(this.cy);
      this.badges.hide();
      this.tip.hidden = true;
      return;
    }
    // Read again at each opening: a version published since (here or elsewhere) is the one the bot serves now.
    this.loaded = this.load();
    await this.loaded;
    if (this.bot.value) await this.show();
  }

  setDays(days) {
    const now = Date.now();
    this.from.value = isoDate(now - (days - 1) * DAY);
    this.to.value = isoDate(now);
    this.linkCsv();
  }

  /** The bots serving this flow and the flow's versions. */
  async load() {
    this.say(t("Loading the bots that serve this flow…"), "busy");
    const kept = this.bot.value;
    this.form.querySelector("button[type=submit]").disabled = false;
    const [bots, versions] = await Promise.all([api("GET", "/api/bots"),
      api("GET", `/api/flows/${encodeURIComponent(this.flowId)}/versions`)]);
    if (!bots.ok || !versions.ok) {
      this.say((bots.ok ? versions : bots).data?.message || t("The funnel could not be loaded."), "error");
      return;
    }
    // A bot running an experiment between this flow's versions counts here too, whatever it serves.
    this.bots = bots.data.filter((b) => b.flow === this.flowId || b.experiment?.flow === this.flowId);
    this.bot.replaceChildren(...this.bots.map((b) => new Option(b.title ? `${b.title} (${b.id})` : b.id, b.id)));
    const numbers = versions.data.map((v) => v.version).reverse();
    this.version.replaceChildren(...numbers.map((n) => new Option(t("Version {n}", { n }), String(n))));
    this.compare.replaceChildren(new Option(t("No comparison"), ""),
      ...numbers.map((n) => new Option(t("Version {n}", { n }), String(n))));
    if (!this.bots.length) {
      this.say(t("No bot serves this flow yet. Publish a version to a bot, and its dialogs are counted here."), "");
      this.form.querySelector("button[type=submit]").disabled = true;
      return;
    }
    if (kept && this.bots.some((b) => b.id === kept)) this.bot.value = kept;
    this.pickBot();
    this.say("", "");
  }

  pickBot() {
    const bot = this.bots.find((b) => b.id === this.bot.value);
    const arms = bot?.experiment?.flow === this.flowId ? bot.experiment.versions : null;
    this.armsNote = "";
    if (arms && arms.length >= 2) {  // the experiment's arms, compared on the graph as two versions are
      this.version.value = String(arms[1]);
      this.compare.value = String(arms[0]);
      this.armsNote = arms.length === 2
        ? t("The bot's experiment compares versions {a} and {b}.", { a: arms[0], b: arms[1] })
        : t("The bot's experiment compares versions {list}: pick any two.", { list: arms.join(", ") });
    } else if (bot && bot.version) {
      this.version.value = String(bot.version);
    }
    this.linkCsv();
  }

  query(format) {
    const params = new URLSearchParams({ flow: this.flowId, version: this.version.value });
    if (this.from.value) params.set("from", new Date(`${this.from.value}T00:00:00`).toISOString());
    if (this.to.value) params.set("to", new Date(new Date(`${this.to.value}T00:00:00`).getTime() + DAY).toISOString());
    if (this.compare.value && this.compare.value !== this.version.value) params.set("compare", this.compare.value);
    if (this.language && this.language.value) params.set("language", this.language.value);
    if (format) params.set("format", format);
    return `/api/bots/${encodeURIComponent(this.bot.value)}/funnel?${params}`;
  }

  linkCsv() {
    if (this.bot.value) this.csv.href = this.query("csv");
  }

  say(text, kind) {
    this.status.textContent = text;
    this.status.dataset.kind = kind;
  }

  /** What is wrong with the chosen days, in the reader's words (the server would refuse in English). */
  periodProblem() {
    if (!this.from.value || !this.to.value) return "";
    const days = (new Date(this.to.value) - new Date(this.from.value)) / DAY + 1;
    if (days < 1) return t("The first day comes after the last one: swap them.");
    if (days > MAX_DAYS) return t("Choose at most {n} days.", { n: MAX_DAYS });
    return "";
  }

  async show() {
    if (!this.bot.value) return;
    const problem = this.periodProblem();
    if (problem) {
      this.say(problem, "error");
      return;
    }
    this.say(t("Counting the dialogs…"), "busy");
    this.tip.hidden = true;
    const res = await api("GET", this.query());
    if (!res.ok) {
      this.say(res.data?.message || t("The funnel could not be loaded."), "error");
      return;
    }
    const main = indexed(res.data);
    const other = res.data.compare ? indexed(res.data.compare) : null;
    // Compared, the older version is A and the newer B, whichever was picked first.
    const [a, b] = other ? (other.version < main.version ? [other, main] : [main, other]) : [null, main];
    this.sides = a ? [a, b] : [b];
    this.badges.show(paint(this.cy, b, a));
    this.summarise(res.data, this.sides);
    // `to` is where counting stopped (the start of the day after the last one), so it reads "until".
    const when = (iso) => new Date(iso).toLocaleString(lang, { dateStyle: "short", timeStyle: "short" });
    this.say(t("Counted from {from} until {to}.", { from: when(res.data.from), to: when(res.data.to) }), "done");
    this.linkCsv();
  }

  summarise(answer, sides) {
    const rows = sides.map((side) => {
      const start = side.states.get(answer.start) || { entered: 0 };
      let completed = 0;
      let cancelled = 0;
      let expired = 0;
      for (const s of side.states.values()) {
        completed += s.ended.completed;
        cancelled += s.ended.cancel;
        expired += s.ended.expired;
      }
      const share = start.entered ? Math.round((100 * completed) / start.entered) : 0;
      const row = el("p", "funnel-line", t("Version {n}: {started} started, {completed} completed ({share}%), {cancelled} cancelled, {expired} expired.",
        { n: side.version, started: start.entered, completed, share, cancelled, expired }));
      row.dataset.version = side.version;
      return row;
    });
    const drawn = new Set(this.cy.nodes().map((n) => n.data("sid")));
    const missing = [...new Set(sides.flatMap((side) => [...side.states.values()].filter((s) => s.entered && !drawn.has(s.id)).map((s) => s.id)))];
    if (missing.length) rows.push(el("p", "hint", t("Counted in states the draft no longer has: {states}.", { states: missing.join(", ") })));
    if (this.armsNote) rows.unshift(el("p", "hint", this.armsNote));
    this.summary.replaceChildren(...rows);
  }

  hover(e) {
    if (!this.open || !this.sides) return;
    const target = e.target;
    const kind = target.isNode() ? "state" : "transition";
    const id = target.data(kind === "state" ? "sid" : "tid");
    this.tip.replaceChildren(el("strong", "", kind === "state" ? (target.data("label") || id) : id));
    for (const lines of details(kind, id, this.sides)) {
      const block = el("div", "funnel-tip-side");
      lines.filter(Boolean).forEach((line, i) => block.append(el(i === 0 && this.sides.length > 1 ? "em" : "div", "", line)));
      this.tip.append(block);
    }
    const p = e.renderedPosition || target.renderedMidpoint?.() || { x: 0, y: 0 };
    this.tip.style.left = `${p.x + 14}px`;
    this.tip.style.top = `${p.y + 14}px`;
    this.tip.hidden = false;
  }
}
