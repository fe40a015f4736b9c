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
import { Simulator } from "./simulator.js";
import { TestsPanel, installTabs } from "./editor/tests.js";
import { loginUrl } from "./api.js";
import { t } from "./i18n.js";

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
const cy = await openGraph(canvas, initial || {}, { large: size > LARGE });
const issues = new IssuesPanel(cy, `/flows/${encodeURIComponent(flowId)}/edit/issues`);
const panel = new SidePanel(document.getElementById("panel"), `/flows/${encodeURIComponent(flowId)}/edit`, store,
  (kind, id) => kind === "settings" || cy.getElementById(kind === "state" ? nodeKey(id) : edgeKey(id)).nonempty());
let clipboard = null;
let selectionTimer = null;
let pastes = 0;

/** The save status; an expired session also gets a link to log in again. */
function setStatus(text, kind, { expired = false } = {}) {
  status.textContent = text;
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
  panel.disable();
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
  const { doc, id } = ops.addState(store.doc, position);
  store.commit(doc, "add state");
  // Cytoscape clears the selection after a background double-tap, so select once that has happened.
  setTimeout(() => select("state", id), 0);
  return id;
}

function addTransition(from, to) {
  const { doc, id } = ops.addTransition(store.doc, from, to);
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

/** The middle of the view, moved down past any state already there so the new one is not hidden. */
function viewCentre() {
  const ext = cy.extent();
  const pos = { x: (ext.x1 + ext.x2) / 2, y: (ext.y1 + ext.y2) / 2 };
  // Position and size, not boundingBox(): that measures labels, slow across a big flow.
  const covers = (n) => {
    const p = n.position();
    const w = n.outerWidth() / 2 + 80;
    const h = n.outerHeight() / 2 + 30;
    return pos.x > p.x - w && pos.x < p.x + w && pos.y > p.y - h && pos.y < p.y + h;
  };
  for (let i = 0; i < 50 && cy.nodes().some(covers); i += 1) pos.y += 70;
  return pos;
}

const actions = {
  addState: () => addState(viewCentre()),
  delete: deleteSelection,
  undo: () => store.undo(),
  redo: () => store.redo(),
  copy: () => {
    const ids = selectedStates();
    if (ids.length) { clipboard = ops.copyStates(store.doc, ids); pastes = 0; }
  },
  paste: () => {
    if (!clipboard || !clipboard.states.length) return;
    pastes += 1;
    const { doc, ids } = ops.pasteStates(store.doc, clipboard, { x: 40 * pastes, y: 40 * pastes });
    store.commit(doc, "paste");
    selected(cy).unselect();
    cy.collection(ids.map((id) => cy.getElementById(nodeKey(id)))).select();
  },
  selectAll: () => cy.nodes().select(),
  deselect: () => selected(cy).unselect(),
  rename: () => {
    const nodes = selected(cy).nodes();
    if (nodes.length === 1) rename(nodes[0]);
  },
  layout: async () => {
    await autoLayout(cy);
    store.commit(ops.setPositions(store.doc, positionsOf(cy.nodes())), "layout");
  },
  fit: () => cy.animate(statesViewport(cy, { maxZoom: cy.maxZoom() }), { duration: 200 }),
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
installKeys(actions);
installEdgeDrawing(cy, canvas, addTransition);

// Keys act on the canvas once it was touched; leaving a form field this way also saves that field.
cy.on("tapstart", () => { if (document.activeElement !== canvas) canvas.focus({ preventScroll: true }); });

// Cytoscape reports two quick taps as a double tap even on different targets; only the same one counts.
const taps = [];
cy.on("tap", (e) => { taps.push(e.target); if (taps.length > 2) taps.shift(); });
cy.on("dbltap", (e) => {
  if (taps.length < 2 || taps[0] !== e.target || taps[1] !== e.target) return;
  if (e.target === cy) addState(e.position);
  else if (e.target.isNode()) rename(e.target);
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

async function start(doc) {
  const placed = Object.keys(doc.layout || {}).length;
  // Saved positions are used as they are (openGraph fitted the view to them); dagre runs only for a flow
  // mostly without them (or on request).
  if ((doc.states || []).length > 1 && placed < doc.states.length / 2) await autoLayout(cy);
  setStatus(t("All changes saved"), "saved");
  status.dataset.revision = store.revision;
  panel.show("none");
  performance.mark("editor:built");
  await drawn();
  performance.mark("editor:drawn");
  window.botflowEditor.ready = performance.now() - started;
  window.botflowEditor.readyAt = performance.now();
  document.dispatchEvent(new CustomEvent("botflow:ready"));
  issues.refresh();
  window.botflowEditor.minimap = new Minimap(cy, document.getElementById("minimap"));
}

window.botflowEditor = { cy, store, issues, addState, addTransition, ready: null, readyAt: null };
const simRoot = document.getElementById("simulator");
if (simRoot) {
  const selectedState = () => { const nodes = selected(cy).nodes(); return nodes.length === 1 ? nodes[0].data("sid") : null; };
  const simulator = new Simulator(simRoot, { flowId, beforeSend: () => store.whenIdle(), selectedState });
  simulator.loadVersions();
  window.botflowEditor.simulator = simulator;
  installTabs(simRoot);
  window.botflowEditor.tests = new TestsPanel(document.getElementById("tests"), { flowId, cy, simulator, source: simulator.source });
}
if (initial) start(initial).catch((error) => setStatus(error.message, "error"));
