// The flow editor page: wires the canvas, the draft store, the side panel, live validation and the simulator.
import * as ops from "./editor/doc.js";
import {
  openGraph, syncGraph, autoLayout, statesViewport, positionsOf, selected, nodeKey, edgeKey, LARGE,
} from "./editor/graph.js";
import { DraftStore } from "./editor/store.js";
import { IssuesPanel } from "./editor/issues.js";
import { SidePanel } from "./editor/panel.js";
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
import { TestsPanel, installTabs } from "./editor/tests.js";
import { loginUrl } from "./api.js";

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
// Cards can be switched off (the toolbar's Cards button), for a denser view of titles only.
const cardsOn = window.localStorage.getItem("botflow.cards") !== "off";
const cy = await openGraph(canvas, initial || {}, { large: size > LARGE, cards: cardsOn });
const issues = new IssuesPanel(cy, `/flows/${encodeURIComponent(flowId)}/edit/issues`);
const panel = new SidePanel(document.getElementById("panel"), `/flows/${encodeURIComponent(flowId)}/edit`, store,
  (kind, id) => kind === "settings" || cy.getElementById(kind === "state" ? nodeKey(id) : edgeKey(id)).nonempty());
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
  const doc = ops.deleteStates(ops.deleteTransitions(store.doc, transitions), states);
  store.commit(doc, "delete");
  panel.show("none");
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

const layoutButton = document.querySelector("[data-action=layout]");
const progress = document.createElement("progress");
progress.className = "layout-progress";
progress.hidden = true;
status.before(progress);

/** Auto-layout with a progress bar and a status line while ELK works (a big flow takes seconds). */
async function arrange() {
  if (layoutButton && layoutButton.disabled) return;
  const n = cy.nodes().length;
  if (layoutButton) layoutButton.disabled = true;
  const shown = setTimeout(() => {
    progress.hidden = false;
    setStatus(t("Arranging {n} states…", { n }), "saving");
  }, 150);
  try {
    await autoLayout(cy, { viewport: fitOptions() });
    store.commit(ops.setPositions(store.doc, positionsOf(cy.nodes())), "layout");
  } catch (error) {
    setStatus(t("The layout failed: {reason}", { reason: error.message }), "error");
  } finally {
    clearTimeout(shown);
    progress.hidden = true;
    if (layoutButton) layoutButton.disabled = false;
  }
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
  layout: arrange,
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

// A viewer's page has no edit tools: no handle, no ports, no "+ transition".
const editable = document.querySelector("[data-action=addState]") !== null;
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

// Moves: one commit for everything dropped together.
let moved = null;
cy.on("dragfree", "node", (e) => {
  if (!moved) {
    moved = cy.collection();
    queueMicrotask(() => {
      const nodes = moved;
      moved = null;
      store.commit(ops.setPositions(store.doc, positionsOf(nodes)), "move");
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
  const placed = Object.keys(doc.layout || {}).length;
  // Saved positions are used as they are (openGraph fitted the view to them); the layout runs only for a flow
  // mostly without them (or on request).
  if ((doc.states || []).length > 1 && placed < doc.states.length / 2) await autoLayout(cy, { viewport: fitOptions() });
  setStatus(t("All changes saved"), "saved");
  status.dataset.revision = store.revision;
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
