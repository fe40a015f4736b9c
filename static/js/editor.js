// The flow editor page: wires the canvas, the draft store, the side panel, live validation and the simulator.
import * as ops from "./editor/doc.js";
import {
  openGraph, syncGraph, autoLayout, statesViewport, positionsOf, selected, nodeKey, edgeKey, LARGE,
} from "./editor/graph.js";
import { DraftStore } from "./editor/store.js";
import { IssuesPanel } from "./editor/issues.js";
import { SidePanel } from "./editor/panel.js";
import { installPreview } from "./editor/preview.js";
import { installEdgeDrawing } from "./editor/handles.js";
import { installKeys } from "./editor/keys.js";
import { startRename } from "./editor/rename.js";
import { Minimap } from "./editor/minimap.js";
import { CardLayer } from "./editor/overlay.js";
import { cardOf } from "./editor/cards.js";
import { freeSpot, freeOffset, boxesOf } from "./editor/space.js";
import { FindBox, Outline } from "./editor/search.js";
import { Shortcuts } from "./editor/shortcuts.js";
import { installAddTransition } from "./editor/addform.js";
import { centre } from "./editor/issues.js";
import { dropRoutes, curl } from "./editor/routes.js";
import { t } from "./i18n.js";
import { Simulator } from "./simulator.js";
import { chooseLanguage, editingLanguage, flowLanguages, languageNames, setLanguages } from "./editor/language.js";
import { TestsPanel, installTabs } from "./editor/tests.js";
import { loginUrl } from "./api.js";
import { installPanels } from "./editor/panels.js";
import { installOverflow } from "./editor/overflow.js";

const root = document.getElementById("editor");
const flowId = root.dataset.flowId;
const canvas = document.getElementById("canvas");
const status = document.getElementById("save-status");
const banner = document.getElementById("conflict-banner");

const started = performance.now();
performance.mark("editor:script");
const store = new DraftStore(`/api/flows/${encodeURIComponent(flowId)}`);

// The canvas is made with the flow in it (see openGraph); big flows get the cheaper drawing options.
let initial = null;
try {
  initial = await store.load(window.botflowDraft);
  performance.mark("editor:draft");
} catch (error) {
  setStatus(error.message, "error");
}
const size = initial ? (initial.states || []).length + (initial.transitions || []).length : 0;
// A flow mostly without saved places (an import) is laid out as soon as it is drawn: the worker starts now.
const unplaced = !!initial && (initial.states || []).length > 1
  && Object.keys(initial.layout || {}).length < initial.states.length / 2;
if (unplaced) import("./editor/layout.js").then(({ warmLayout }) => warmLayout());
setLanguages(initial || {});  // before the cards are drawn: they show the flow's texts in a language
// Cards can be switched off (the toolbar's Cards button), for a denser view of titles only.
const cardsOn = window.localStorage.getItem("botflow.cards") !== "off";
// A viewer's page has no edit tools: no handle, no ports, no "+ transition".
const editable = document.querySelector("[data-action=addState]") !== null;
const layoutButton = document.querySelector("[data-action=layout]");
let layoutJob = null;  // the running layout's AbortController: one at a time
// A big import is laid out from its document and drawn once, at its places (import-layout.js); a smaller one
// is drawn first and laid out on the canvas (start, below), where ELK routes its edges around the cards.
let laidOutFirst = null;
if (unplaced) {
  const { laidOutFirst: first, layOutDocument } = await import("./editor/import-layout.js");
  if (first(initial)) {
    const aspect = Math.max(0.5, canvas.clientWidth / Math.max(1, canvas.clientHeight));
    laidOutFirst = await arrange({
      count: initial.states.length,
      run: (options) => layOutDocument(initial, { aspect, cards: cardsOn, ...options }),
    });
  }
}
const cy = await openGraph(canvas, store.doc || {}, { large: size > LARGE, cards: cardsOn });
if (laidOutFirst !== null) cy.scratch("layoutEngine", laidOutFirst ? "quick" : null);
const issues = new IssuesPanel(cy, `/flows/${encodeURIComponent(flowId)}/edit/issues`);
const panel = new SidePanel(document.getElementById("panel"), `/flows/${encodeURIComponent(flowId)}/edit`, store,
  (kind, id) => kind === "settings" || cy.getElementById(kind === "state" ? nodeKey(id) : edgeKey(id)).nonempty());
installPreview(document.getElementById("panel"));
let clipboard = null;
let funnel = null;
let selectionTimer = null;

/** The save status; an expired session also gets a link to log in again. */
function setStatus(text, kind, { expired = false } = {}) {
  status.textContent = text;
  status.title = text;  // a long refusal is cut to one line on the toolbar; the whole of it shows on hover
  status.dataset.kind = kind;
  if (expired) {
    const link = document.createElement("a");
    link.href = loginUrl();
    link.textContent = t("Log in again");
    status.append(" ", link);
  }
}

// ---- document changes -> canvas, validation, panel ----
store.addEventListener("change", (e) => {
  syncGraph(cy, e.detail.doc);
  issues.remark();
  if (e.detail.source === "undo" || e.detail.source === "redo") panel.refresh();
});
store.addEventListener("saving", () => setStatus(t("Saving…"), "saving"));
// Typed into the side panel: saved when the field is left (or before a link away), never shown as saved before.
store.addEventListener("unsaved", () => setStatus(t("Unsaved changes"), "saving"));
store.addEventListener("saved", (e) => {
  setStatus(t("All changes saved"), "saved");
  status.dataset.revision = e.detail.revision;
  if (e.detail.source !== "form") issues.refresh();  // a form's answer brought the issues already
});
// A refused panel edit: the status must not say "saved" while the panel holds a change the server refused.
store.addEventListener("rejected", (e) => {
  setStatus(t("Not saved: {reason}", { reason: e.detail.message || t("fix the marked field") }), "error");
});
store.addEventListener("error", (e) => {
  const details = (e.detail.details || []).map((d) => d.message).filter(Boolean).join("; ");
  const reason = details ? `${e.detail.message} (${details})` : e.detail.message;
  setStatus(t("Not saved: {reason}", { reason }), "error", { expired: e.detail.status === 401 });
});
store.addEventListener("conflict", () => {
  setStatus(t("Not saved: someone else changed this flow"), "error");
  banner.hidden = false;
  panel.freeze(t("Your text is still here: copy what you need, then reload the latest draft."));
});
banner.querySelector("[data-reload]").addEventListener("click", () => window.location.reload());

// ---- canvas edits ----
function selectedStates() {
  return selected(cy).nodes().map((n) => n.data("sid"));
}

function select(kind, id) {
  selected(cy).unselect();
  const ele = cy.getElementById(kind === "state" ? nodeKey(id) : edgeKey(id));
  ele.select();
  return ele;
}

function addState(position) {
  const spot = freeSpot(cy, position, cardOf({ id: "new", say: [{ text: "" }] }, { cards: cardsOn }));
  const { doc, id } = ops.addState(store.doc, spot);
  store.commit(doc, "add state");
  // Cytoscape clears the selection after a background double-tap, so select once that has happened.
  setTimeout(() => select("state", id), 0);
  return id;
}

function addTransition(from, to, trigger = null) {
  const { doc, id } = ops.addTransition(store.doc, from, to, trigger);
  store.commit(doc, "add transition");
  select("transition", id);
  return id;
}

function deleteSelection() {
  const states = selectedStates();
  const transitions = selected(cy).edges().map((e) => e.data("tid"));
  if (!states.length && !transitions.length) return;
  // Asked first: a key press is easily a mistake, and a state takes its transitions with it.
  const one = states.length + transitions.length === 1;
  const name = states.length ? (ops.stateOf(store.doc, states[0]) || {}).title || states[0] : "";
  const question = one && states.length ? t("Delete the state “{title}” and its transitions?", { title: name })
    : one ? t("Delete this transition?") : t("Delete {n} selected elements?", { n: states.length + transitions.length });
  if (!window.confirm(question)) return;
  const doc = ops.deleteStates(ops.deleteTransitions(store.doc, transitions), states);
  store.commit(doc, "delete");
  panel.show("none");
}

// What the arrow keys selected, said to a screen reader (the canvas itself is a picture to it).
const announcer = document.createElement("div");
announcer.className = "visually-hidden";
announcer.setAttribute("aria-live", "polite");
canvas.parentElement.append(announcer);

/**
 * Select the state nearest to the selected one in `direction` (left, right, up, down): the one with the
 * smallest distance, sideways steps counting double; with nothing selected, the start state.
 */
function stepTo(direction) {
  const current = selected(cy).nodes();
  let next = null;
  if (current.length !== 1) {
    next = cy.nodes(".start").nonempty() ? cy.nodes(".start")[0] : cy.nodes()[0];
  } else {
    const from = current[0].position();
    const [ax, ay] = { left: [-1, 0], right: [1, 0], up: [0, -1], down: [0, 1] }[direction];
    let best = Infinity;
    cy.nodes().forEach((n) => {
      if (n.same(current[0]) || n.hasClass("eh-ghost-node")) return;
      const p = n.position();
      const along = (p.x - from.x) * ax + (p.y - from.y) * ay;
      if (along <= 1) return;
      const side = Math.abs((p.x - from.x) * ay) + Math.abs((p.y - from.y) * ax);
      const cost = along + 2 * side;
      if (cost < best) { best = cost; next = n; }
    });
  }
  if (!next) return;
  cy.batch(() => { selected(cy).unselect(); next.select(); });
  if (!inView(next)) cy.animate({ center: { eles: next } }, { duration: 150 });
  announcer.textContent = next.data("title") || next.data("sid");
}

/** The middle of the view (addState then moves the new state to the nearest free space). */
function viewCentre() {
  const ext = cy.extent();
  return { x: (ext.x1 + ext.x2) / 2, y: (ext.y1 + ext.y2) / 2 };
}

/** Where a pasted group goes: the free space nearest to where it was copied from. */
function pasteOffset(clip) {
  const group = clip.states.map((state) => {
    const pos = clip.layout[state.id] || viewCentre();
    const card = cardOf(state, { cards: cardsOn });
    return { x1: pos.x - card.w / 2, y1: pos.y - card.h / 2, x2: pos.x + card.w / 2, y2: pos.y + card.h / 2 };
  });
  return freeOffset(group, boxesOf(cy));
}

/** The line over the canvas while a layout runs: what it does, how far it got, and a way to stop it. */
function layoutLine(n, stop) {
  const line = document.createElement("div");
  line.className = "canvas-note layout-line";
  line.setAttribute("role", "status");
  const text = document.createElement("span");
  text.textContent = t("Arranging {n} states…", { n });
  const bar = document.createElement("progress");
  bar.className = "layout-progress";
  bar.setAttribute("aria-label", t("Arranging {n} states…", { n }));
  const button = document.createElement("button");
  button.type = "button";
  button.dataset.stopLayout = "";
  button.textContent = t("Stop");
  button.addEventListener("click", stop);
  line.append(text, bar, button);
  canvas.parentElement.append(line);
  return { line, bar, remove: () => line.remove() };
}

/**
 * Lay the flow out in the worker with a progress line and a Stop button (a big flow takes seconds), then
 * save the places as the draft's layout. Resolves whether the layout was applied; a stop leaves the flow as
 * it was.
 */
async function arrange({ save = editable, count = null, run = onCanvas } = {}) {
  if (layoutJob) return false;
  const n = count === null ? cy.nodes().length : count;
  layoutJob = new AbortController();
  if (layoutButton) layoutButton.disabled = true;
  let shown = null;
  const show = setTimeout(() => { shown = layoutLine(n, () => layoutJob && layoutJob.abort()); }, 150);
  try {
    const places = await run({
      signal: layoutJob.signal,
      onProgress: (fraction) => { if (shown) shown.bar.value = fraction; },
    });
    if (save) store.commit(ops.setPositions(store.doc, places), "layout");
    performance.mark("editor:layout-saved");
    return true;
  } catch (error) {
    if (error.name === "AbortError") setStatus(t("Arranging stopped: the states stay where they were."), "saved");
    else setStatus(t("The layout failed: {reason}", { reason: error.message }), "error");
    return false;
  } finally {
    clearTimeout(show);
    if (shown) shown.remove();
    layoutJob = null;
    if (layoutButton) layoutButton.disabled = false;
  }
}

/** Lay out the flow drawn on the canvas; resolves with the new places by state id. */
async function onCanvas(options) {
  await autoLayout(cy, { viewport: fitOptions(), ...options });
  return positionsOf(cy.nodes());
}

/** How Fit frames the flow: clear of the minimap when it is open. */
function fitOptions() {
  const map = document.getElementById("minimap");
  const open = map && !map.hidden && !map.classList.contains("collapsed");
  return { maxZoom: 1.2, reserve: open ? { w: map.offsetWidth + 20, h: map.offsetHeight + 50 } : null };  // with its toggle above
}

const actions = {
  addState: () => addState(viewCentre()),
  delete: deleteSelection,
  undo: () => store.undo(),
  redo: () => store.redo(),
  copy: () => {
    const ids = selectedStates();
    if (ids.length) clipboard = ops.copyStates(store.doc, ids);
  },
  paste: () => {
    if (!clipboard || !clipboard.states.length) return;
    const { doc, ids } = ops.pasteStates(store.doc, clipboard, pasteOffset(clipboard));
    store.commit(doc, "paste");
    selected(cy).unselect();
    cy.collection(ids.map((id) => cy.getElementById(nodeKey(id)))).select();
  },
  selectAll: () => cy.nodes().select(),
  deselect: () => {
    if (shortcuts.open) shortcuts.hide();
    else selected(cy).unselect();
  },
  rename: () => {
    const nodes = selected(cy).nodes();
    if (nodes.length === 1) rename(nodes[0]);
  },
  layout: () => arrange(),
  step: (direction) => stepTo(direction),
  open: () => {
    const nodes = selected(cy).nodes();
    if (nodes.length !== 1) return;
    // The form loads through the store's queue (panel.js): focus its first field once it is in.
    panel.show("state", nodes[0].data("sid"));
    store.whenIdle().then(() => {
      const field = document.querySelector("#panel input:not([type=hidden]), #panel textarea, #panel select");
      if (field) field.focus();
    });
  },
  fit: () => cy.animate(statesViewport(cy, fitOptions()), { duration: 200 }),
  search: () => finder.open(),
  outline: () => { outline.toggle(); },
  funnel: async () => {
    if (!funnel) {  // loaded on first use: most visits to the editor never open it
      const { FunnelView } = await import("./editor/funnel.js");
      funnel = funnel || new FunnelView(cy, document.getElementById("funnel"), flowId);
      window.botflowEditor.funnel = funnel;
    }
    await funnel.toggle();
  },
  shortcuts: () => shortcuts.toggle(),
  minimap: () => {
    const map = document.getElementById("minimap");
    map.classList.toggle("collapsed");
    document.querySelector("[data-action=minimap]").setAttribute("aria-expanded", String(!map.classList.contains("collapsed")));
    if (window.botflowEditor.minimap && !map.classList.contains("collapsed")) window.botflowEditor.minimap.redraw();
  },
  cards: () => {
    window.localStorage.setItem("botflow.cards", cardsOn ? "off" : "on");
    window.location.reload();
  },
  zoomIn: () => cy.zoom({ level: cy.zoom() * 1.25, renderedPosition: { x: cy.width() / 2, y: cy.height() / 2 } }),
  zoomOut: () => cy.zoom({ level: cy.zoom() / 1.25, renderedPosition: { x: cy.width() / 2, y: cy.height() / 2 } }),
  settings: () => {
    selected(cy).unselect();
    clearTimeout(selectionTimer);  // the unselect above must not replace the settings with a hint
    panel.show("settings");
  },
};

function rename(node) {
  startRename(cy, canvas, node, (title) => {
    if (title !== node.data("title")) store.commit(ops.setTitle(store.doc, node.data("sid"), title.trim()), "rename");
    panel.refresh();
  });
}

for (const button of document.querySelectorAll("[data-action]")) {
  button.addEventListener("click", () => actions[button.dataset.action]());
}
// Issue counts per state, for the outline and the go-to box.
function issueCounts() {
  const counts = new Map();
  for (const issue of issues.issues) for (const sid of issue.states || []) counts.set(sid, (counts.get(sid) || 0) + 1);
  return counts;
}

/** Select a state and bring it to the middle of the view. */
function goTo(sid) {
  const node = select("state", sid);
  if (node.nonempty()) centre(cy, node);
  canvas.focus({ preventScroll: true });
}

const finder = new FindBox(canvas.parentElement, store, issueCounts, goTo);
const outline = new Outline(document.getElementById("outline"), store, issueCounts, goTo);
const shortcuts = new Shortcuts(document.body);
document.addEventListener("botflow:issues", () => outline.render());
store.addEventListener("change", () => outline.render());
if (editable) installAddTransition(document.getElementById("panel"), store, addTransition);
// A viewer looks and tries the flow, but no key, drag or double-click changes it (the server refuses anyway).
const VIEWER_ACTIONS = new Set(["copy", "selectAll", "search", "shortcuts", "deselect", "fit", "zoomIn", "zoomOut",
  "outline", "funnel", "cards", "minimap", "settings"]);
installKeys(editable ? actions : Object.fromEntries(Object.entries(actions).filter(([name]) => VIEWER_ACTIONS.has(name))));
if (!editable) {
  cy.autoungrabify(true);
  panel.readOnly = t("You can look at this flow; changing it needs the editor role.");
}
const drawing = editable ? installEdgeDrawing(cy, canvas, addTransition) : null;
const cards = cardsOn
  ? new CardLayer(cy, canvas.parentElement, editable ? (node, port, e) => drawing.fromPort(node, port, e) : null)
  : null;
document.addEventListener("botflow:issues", (e) => { if (cards) cards.setIssues(e.detail.issues); });

// ---- the language the flow's texts are shown in (a flow with languages) ----
const languagePicker = document.querySelector("[data-editor-language]");
let refitToolbar = () => {};  // the toolbar's overflow fitting, once installed (below)
/** The picker lists the flow's languages, the default first; hidden for a flow in one language. */
function syncLanguages(doc) {
  const changed = setLanguages(doc);
  if (!languagePicker) return;
  const codes = flowLanguages();
  const wrap = languagePicker.closest("[data-languages]");
  if (wrap.hidden !== codes.length < 2) {
    wrap.hidden = codes.length < 2;
    // Shown or hidden, the switch changes what fits: the bar is laid out again (no "⋯" left with nothing in it).
    refitToolbar();
  }
  if (changed || !languagePicker.options.length) {
    const names = languageNames();
    languagePicker.replaceChildren(...codes.map((code, i) => {
      const option = document.createElement("option");
      option.value = code;
      option.textContent = i === 0 ? t("{language} (default)", { language: names(code) }) : names(code);
      return option;
    }));
  }
  languagePicker.value = editingLanguage() || "";
}
/** Every card again, in the shown language (their sizes fit every language, so nothing moves). */
function redrawCards() {
  cy.batch(() => {
    for (const state of store.doc.states || []) {
      const node = cy.getElementById(nodeKey(state.id));
      if (node.nonempty()) node.data("card", cardOf(state, { cards: cardsOn }));
    }
  });
}
syncLanguages(initial || {});
store.addEventListener("change", (e) => syncLanguages(e.detail.doc));
if (languagePicker) {
  languagePicker.addEventListener("change", () => {
    chooseLanguage(languagePicker.value);
    redrawCards();
    panel.refresh();
  });
}

// Keys act on the canvas once it was touched; leaving a form field this way also saves that field.
cy.on("tapstart", () => { if (document.activeElement !== canvas) canvas.focus({ preventScroll: true }); });

// Cytoscape reports two quick taps as a double tap even on different targets; only the same one counts.
const taps = [];
cy.on("tap", (e) => { taps.push(e.target); if (taps.length > 2) taps.shift(); });
cy.on("dbltap", (e) => {
  if (taps.length < 2 || taps[0] !== e.target || taps[1] !== e.target) return;
  if (!editable) return;
  if (e.target === cy) addState(e.position);
  else if (e.target.isNode()) rename(e.target);
});

// A dragged state's transitions lose the layout's routes and curve around the cards again, once a frame.
let dragged = null;
cy.on("drag", "node", (e) => {
  if (!dragged) {
    dragged = cy.collection();
    requestAnimationFrame(() => {
      const edges = dragged.connectedEdges();
      dragged = null;
      cy.batch(() => { dropRoutes(edges); edges.forEach(curl); });
    });
  }
  dragged = dragged.union(e.target);
});

// A dropped card's transitions get routes around the cards again (reroute.js); more than this many edges at
// once stay curves, so a drop of a large selection never holds the page.
const REROUTE_LIMIT = 150;
function reroute(edges) {
  if (edges.empty() || edges.length > REROUTE_LIMIT) return;
  import("./editor/reroute.js")
    .then(({ rerouteEdges }) => { window.botflowEditor.rerouted = rerouteEdges(cy, edges); })
    .catch((error) => console.warn(error));
}

// Moves: one commit for everything dropped together.
let moved = null;
cy.on("dragfree", "node", (e) => {
  if (!moved) {
    moved = cy.collection();
    queueMicrotask(() => {
      const nodes = moved;
      moved = null;
      store.commit(ops.setPositions(store.doc, positionsOf(nodes)), "move");
      reroute(nodes.connectedEdges());
    });
  }
  moved = moved.union(e.target);
});

// Selection opens the matching form once the selection settles.
cy.on("select unselect", () => {
  clearTimeout(selectionTimer);
  selectionTimer = setTimeout(() => {
    const sel = selected(cy);
    if (sel.length === 1) panel.show(sel.isNode() ? "state" : "transition", sel.data(sel.isNode() ? "sid" : "tid"));
    else if (sel.length > 1) panel.show("none", t("{n} elements selected. Delete removes them; Ctrl+C copies the states.", { n: sel.length }));
    else panel.show("none");
  }, 30);
});
panel.onSelect = (key) => {
  const [kind, id] = key.split(/:(.*)/s);
  if (kind === "state" || kind === "transition") {
    const ele = cy.getElementById(kind === "state" ? nodeKey(id) : edgeKey(id));
    cy.batch(() => { selected(cy).unselect(); ele.select(); });
  }
};

// ---- simulator marks ----
function inView(ele) {
  const box = ele.renderedBoundingBox();
  return box.x1 >= 0 && box.y1 >= 0 && box.x2 <= cy.width() && box.y2 <= cy.height();
}

document.addEventListener("botflow:sim", (e) => {
  cy.batch(() => {
    cy.elements(".sim-current, .sim-fired").removeClass("sim-current sim-fired");
    if (e.detail.state) cy.getElementById(nodeKey(e.detail.state)).addClass("sim-current");
    if (e.detail.transition) cy.getElementById(edgeKey(e.detail.transition)).addClass("sim-fired");
  });
  const current = cy.getElementById(nodeKey(e.detail.state || ""));
  if (current.nonempty() && !inView(current)) cy.animate({ center: { eles: current } }, { duration: 200 });
});

// ---- start ----
/**
 * Resolves once the canvas has drawn a frame with everything on it (with nothing to draw, after a few frames;
 * in a hidden tab, which draws nothing, after a while: the editor must not wait for the tab to be shown).
 */
function drawn() {
  return new Promise((resolve) => {
    cy.one("render", resolve);
    requestAnimationFrame(() => requestAnimationFrame(() => requestAnimationFrame(resolve)));
    setTimeout(resolve, 2000);
  });
}

/**
 * Saved positions made for smaller boxes (or by hand) can put cards on top of each other: offer Auto-layout
 * rather than moving anything unasked (opening a flow never changes it).
 */
function offerLayout() {
  if (!layoutButton || !cardsOn || cy.nodes().length > 400) return;
  const boxes = boxesOf(cy);
  const overlapping = boxes.some((a, i) => boxes.slice(i + 1).some((b) => a.x1 < b.x2 && b.x1 < a.x2 && a.y1 < b.y2 && b.y1 < a.y2));
  if (!overlapping) return;
  const note = document.createElement("div");
  note.className = "canvas-note";
  note.setAttribute("role", "status");
  const text = document.createElement("span");
  text.textContent = t("Some cards overlap at their saved places.");
  const arrangeButton = document.createElement("button");
  arrangeButton.type = "button";
  arrangeButton.className = "primary";
  arrangeButton.textContent = t("Arrange the flow");
  const close = document.createElement("button");
  close.type = "button";
  close.textContent = t("Keep as it is");
  note.append(text, arrangeButton, close);
  const done = () => note.remove();
  arrangeButton.addEventListener("click", () => { done(); arrange(); });
  close.addEventListener("click", done);
  layoutButton.addEventListener("click", done, { once: true });
  canvas.parentElement.append(note);
}

const RESTORE_LIMIT = 400;  // states; past this, a flow gets its routes from Auto-layout only

async function start(doc) {
  performance.mark("editor:start");
  const placed = Object.keys(doc.layout || {}).length;
  // Saved positions are used as they are (openGraph fitted the view to them); the layout runs only for a flow
  // mostly without them (an import), and its places are then saved as the draft's layout (or on request).
  // A stopped layout's words stay; the places of one laid out before drawing may still be on their way.
  if (laidOutFirst !== false) setStatus(store.busy ? t("Saving…") : t("All changes saved"), store.busy ? "saving" : "saved");
  status.dataset.revision = store.revision;
  if (laidOutFirst !== null) {
    window.botflowEditor.laidOut = laidOutFirst;
    window.botflowEditor.layoutEngine = cy.scratch("layoutEngine") || null;
  } else if (unplaced) {
    window.botflowEditor.laidOut = await arrange();
    window.botflowEditor.layoutEngine = cy.scratch("layoutEngine") || null;
  }
  panel.show("none");
  offerLayout();
  performance.mark("editor:built");
  await drawn();
  performance.mark("editor:drawn");
  window.botflowEditor.ready = performance.now() - started;
  window.botflowEditor.readyAt = performance.now();
  document.dispatchEvent(new CustomEvent("botflow:ready"));
  issues.refresh();
  window.botflowEditor.minimap = new Minimap(cy, document.getElementById("minimap"));
  // An auto-laid-out flow gets its routes back (they are not saved), in the worker, after the page is ready.
  if (placed >= doc.states.length && doc.states.length > 1 && doc.states.length <= RESTORE_LIMIT) {
    import("./editor/layout.js")
      .then(({ restoreRoutes }) => restoreRoutes(cy))
      .then((found) => { window.botflowEditor.routesRestored = found; })
      .catch((error) => console.warn(error));
  }
}

// The side column's width, folding and the simulator's full height (panels.js); the canvas follows its size.
installPanels(root, { onResize: () => requestAnimationFrame(() => cy.resize()) });
// One toolbar line at any width and language: what does not fit goes into a "More" menu (overflow.js).
refitToolbar = installOverflow(root.querySelector(".toolbar"));

window.botflowEditor = { cy, store, issues, addState, addTransition, cards, ready: null, readyAt: null };
const simRoot = document.getElementById("simulator");
if (simRoot) {
  const selectedState = () => { const nodes = selected(cy).nodes(); return nodes.length === 1 ? nodes[0].data("sid") : null; };
  const stateTitle = (sid) => (ops.stateOf(store.doc, sid) || {}).title || "";
  const simulator = new Simulator(simRoot, { flowId, beforeSend: () => store.whenIdle(), selectedState, stateTitle });
  simulator.loadVersions().then(() => simulator.openFromUrl());
  window.botflowEditor.simulator = simulator;
  installTabs(simRoot);
  window.botflowEditor.tests = new TestsPanel(document.getElementById("tests"), { flowId, cy, simulator, source: simulator.source });
}
if (initial) start(initial).catch((error) => setStatus(error.message, "error"));
