// The flow drawn with Cytoscape.js: states are nodes `s:<id>`, transitions edges `t:<id>` (one id space).
/* global cytoscape */
import { graphStyle, DETAIL_ZOOM } from "./style.js";
import { DetailLevels, detailInView } from "./detail.js";
import { stateLabel, triggerLabel } from "./labels.js";

export const nodeKey = (id) => `s:${id}`;
export const edgeKey = (id) => `t:${id}`;

/** Flows with more elements (states and transitions) than this get the big-flow drawing (createGraph). */
export const LARGE = 800;

/**
 * A Cytoscape canvas. `large` (a big flow) trades looks for speed: two levels of detail (style.js), the view
 * pans and zooms a snapshot of the drawing, and the screen's pixel density is ignored.
 */
export function createGraph(container, { interactive = true, large = false } = {}) {
  return cytoscape({
    container,
    style: graphStyle({ levels: large }),
    elements: [],
    layout: { name: "preset" },
    minZoom: 0.05,
    maxZoom: 3,
    boxSelectionEnabled: interactive,
    autoungrabify: !interactive,
    selectionType: "single",
    textureOnViewport: large,
    pixelRatio: large ? 1 : undefined,
    motionBlur: false,
  });
}

/**
 * A canvas showing `doc`, the view fitted to its states, filled in the order that is cheapest for Cytoscape on
 * a big flow. Each style property it applies to a new element is announced to every listener and re-examines
 * the element's edges, so the states get their style before any transition exists, all of it before anything
 * listens, and each element once: the level of detail (style.js) is settled before styling. And before its
 * first frame with elements, Cytoscape builds its zoomed-out texture cache synchronously (which the first
 * click throws away again), so the empty canvas draws itself first.
 */
export async function openGraph(container, doc, options = {}) {
  const cy = createGraph(container, options);
  await new Promise((resolve) => {
    cy.one("render", resolve);
    setTimeout(resolve, 100);  // a hidden tab draws nothing; better a slower first frame than none
  });
  performance.mark("editor:canvas");
  syncGraph(cy, { ...doc, transitions: [] });
  cy.viewport(statesViewport(cy));
  const levels = options.large && cy.zoom() >= DETAIL_ZOOM;
  if (levels) detailInView(cy);
  cy.batch(() => cy.nodes().forEach((node) => { node.pstyle("label"); }));
  performance.mark("editor:states");
  syncGraph(cy, doc);
  if (levels) cy.nodes(".detail").connectedEdges().addClass("detail");
  cy.batch(() => cy.edges().forEach((edge) => { edge.pstyle("label"); }));
  if (options.large) cy.scratch("detailLevels", new DetailLevels(cy));
  trackSelection(cy);
  performance.mark("editor:transitions");
  return cy;
}

// Cytoscape finds the selection by testing every element, tens of milliseconds on a 1,000-state flow at each
// click, so an opened canvas keeps the ids of its selected elements.
function trackSelection(cy) {
  const ids = new Set();
  cy.on("select", (e) => { ids.add(e.target.id()); });
  cy.on("unselect remove", (e) => { ids.delete(e.target.id()); });
  cy.scratch("selected", ids);
}

/** The selected elements (from the kept ids on a canvas made by openGraph). */
export function selected(cy) {
  const ids = cy.scratch("selected");
  if (!ids) return cy.elements(":selected");
  return cy.collection([...ids].map((id) => cy.getElementById(id)).filter((e) => e.nonempty() && e.selected()));
}

function nodeData(doc, state) {
  return { id: nodeKey(state.id), sid: state.id, label: stateLabel(state), title: state.title || "" };
}

function nodeClasses(doc, state) {
  const classes = ["state"];
  if (state.id === doc.start) classes.push("start");
  if (state.final) classes.push("final");
  if (state.input) classes.push("waiting");
  return classes.join(" ");
}

function edgeData(tr) {
  return { id: edgeKey(tr.id), tid: tr.id, source: nodeKey(tr.from), target: nodeKey(tr.to), label: triggerLabel(tr) };
}

/** Where states without a saved position go: in rows below everything already placed. */
function spares(doc) {
  let bottom = null;
  let index = 0;
  return () => {
    if (bottom === null) {
      const ys = Object.values(doc.layout || {}).map((p) => p.y);
      bottom = ys.length ? Math.max(...ys) : 0;
    }
    const i = index++;
    return { x: (i % 6) * 190, y: bottom + 120 + Math.floor(i / 6) * 90 };
  };
}

// What each canvas last drew, to skip what did not change: edits build new documents and never mutate
// old ones (see doc.js), so a state, transition or position that is the same object is unchanged.
const drawn = new WeakMap();

/**
 * Bring the canvas in line with `doc`, touching only what changed, so an edit of a 1,000-state flow costs
 * about as much as the edit itself. Transitions naming a missing state are not drawn (validation reports them).
 */
export function syncGraph(cy, doc) {
  const prev = drawn.get(cy) || { states: new Map(), transitions: new Map(), layout: {}, start: undefined };
  const layout = doc.layout || {};
  const states = new Map((doc.states || []).map((s) => [s.id, s]));
  const transitions = new Map((doc.transitions || [])
    .filter((t) => states.has(t.from) && states.has(t.to)).map((t) => [t.id, t]));
  const spare = spares(doc);
  cy.batch(() => {
    for (const id of prev.transitions.keys()) if (!transitions.has(id)) cy.getElementById(edgeKey(id)).remove();
    for (const id of prev.states.keys()) if (!states.has(id)) cy.getElementById(nodeKey(id)).remove();
    const added = [];
    for (const state of states.values()) {
      const pos = layout[state.id];
      const start = state.id === doc.start || state.id === prev.start;
      if (prev.states.get(state.id) === state && prev.layout[state.id] === pos && !(start && doc.start !== prev.start)) continue;
      const node = cy.getElementById(nodeKey(state.id));
      const data = nodeData(doc, state);
      const classes = nodeClasses(doc, state);
      if (node.empty()) {
        added.push({ group: "nodes", data, classes, position: pos ? { ...pos } : spare() });
        continue;
      }
      if (node.data("label") !== data.label || node.data("title") !== data.title) node.data({ label: data.label, title: data.title });
      syncClasses(node, classes, ["state", "start", "final", "waiting"]);
      if (pos && !node.grabbed()) {
        const cur = node.position();
        if (cur.x !== pos.x || cur.y !== pos.y) node.position({ ...pos });
      }
    }
    if (added.length) cy.add(added);
    const newEdges = [];
    for (const tr of transitions.values()) {
      if (prev.transitions.get(tr.id) === tr) continue;
      const edge = cy.getElementById(edgeKey(tr.id));
      const data = edgeData(tr);
      const loop = tr.from === tr.to ? "loop" : "";
      if (edge.nonempty() && (edge.data("source") !== data.source || edge.data("target") !== data.target)) {
        edge.remove();  // endpoints of a Cytoscape edge cannot move; draw it anew
      } else if (edge.nonempty()) {
        if (edge.data("label") !== data.label) edge.data("label", data.label);
        syncClasses(edge, loop, ["loop"]);
        continue;
      }
      newEdges.push({ group: "edges", data, classes: loop });
    }
    if (newEdges.length) cy.add(newEdges);
  });
  drawn.set(cy, { states, transitions, layout, start: doc.start });
}

function syncClasses(ele, wanted, managed) {
  const want = new Set(wanted.split(" ").filter(Boolean));
  for (const cls of managed) {
    if (want.has(cls) && !ele.hasClass(cls)) ele.addClass(cls);
    if (!want.has(cls) && ele.hasClass(cls)) ele.removeClass(cls);
  }
}

/** Run the dagre layout (top to bottom) and resolve once positions are final and the view shows them. */
export function autoLayout(cy, eles) {
  return new Promise((resolve) => {
    const layout = (eles || cy.elements()).layout({
      name: "dagre", rankDir: "TB", nodeSep: 40, rankSep: 70, edgeSep: 20, animate: false, fit: false,
    });
    layout.one("layoutstop", () => {
      cy.viewport(statesViewport(cy));
      resolve();
    });
    layout.run();
  });
}

// A state's size on the canvas (style.js), with room for the widest border: enough to fit the view to the
// states without asking Cytoscape, which would first apply every element's style.
const HALF_WIDTH = 78;
const HALF_HEIGHT = 25;

/**
 * The zoom and pan that show every state, found from the states' positions alone: `cy.fit` would measure
 * every label and route every edge first, which takes seconds on a 1,000-state flow.
 */
export function statesViewport(cy, { padding = 40, maxZoom = 1.2 } = {}) {
  let x1 = Infinity; let y1 = Infinity; let x2 = -Infinity; let y2 = -Infinity;
  cy.nodes().forEach((n) => {
    const p = n.position();
    x1 = Math.min(x1, p.x - HALF_WIDTH); x2 = Math.max(x2, p.x + HALF_WIDTH);
    y1 = Math.min(y1, p.y - HALF_HEIGHT); y2 = Math.max(y2, p.y + HALF_HEIGHT);
  });
  if (x1 === Infinity) return { zoom: cy.zoom(), pan: cy.pan() };
  const fit = Math.min((cy.width() - 2 * padding) / (x2 - x1), (cy.height() - 2 * padding) / (y2 - y1));
  const zoom = Math.max(cy.minZoom(), Math.min(maxZoom, cy.maxZoom(), fit));
  return { zoom, pan: { x: cy.width() / 2 - zoom * (x1 + x2) / 2, y: cy.height() / 2 - zoom * (y1 + y2) / 2 } };
}

export function positionsOf(nodes) {
  const out = {};
  nodes.forEach((n) => { out[n.data("sid")] = { ...n.position() }; });
  return out;
}
