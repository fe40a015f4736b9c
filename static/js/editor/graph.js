// The flow drawn with Cytoscape.js: states are nodes `s:<id>`, transitions edges `t:<id>` (one id space).
/* global cytoscape */
import { graphStyle, DETAIL_ZOOM } from "./style.js";
import { DetailLevels, DotLevel, detailInView } from "./detail.js";
import { pressLabel, stateLabel, triggerLabel } from "./labels.js";
import { cardOf, portOf } from "./cards.js";
import { dropRoutes, curl } from "./routes.js";

export const nodeKey = (id) => `s:${id}`;
export const edgeKey = (id) => `t:${id}`;

/** Flows with more elements (states and transitions) than this get the big-flow drawing (createGraph). */
export const LARGE = 800;

/**
 * A Cytoscape canvas. `large` (a big flow) trades looks for speed: two levels of detail (style.js), the view
 * pans and zooms a snapshot of the drawing, and the screen's pixel density is ignored.
 */
export function createGraph(container, { interactive = true, large = false, cards = true } = {}) {
  const cy = cytoscape({
    container,
    style: graphStyle({ levels: large, cards }),
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
  cy.scratch("cards", cards);
  return cy;
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
  // The look for this zoom is settled before anything is styled (a swap later restyles every element).
  const dots = new DotLevel(cy, { levels: !!options.large, cards: options.cards !== false });
  dots.update();
  cy.scratch("dotLevel", dots);
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

function nodeData(cy, state) {
  const card = cardOf(state, { cards: cy.scratch("cards") !== false });
  return { id: nodeKey(state.id), sid: state.id, label: stateLabel(state), title: state.title || "", w: card.w, h: card.h, card };
}

function nodeClasses(doc, state) {
  const classes = ["state"];
  if (state.id === doc.start) classes.push("start");
  if (state.final) classes.push("final");
  if (state.input) classes.push("waiting");
  return classes.join(" ");
}

/** The edge's data: its ends, label, and where it leaves its state (a button's or the input's port). */
function edgeData(tr, card) {
  const data = { id: edgeKey(tr.id), tid: tr.id, source: nodeKey(tr.from), target: nodeKey(tr.to), label: triggerLabel(tr) };
  const key = portOf(tr);
  const port = card && key ? card.ports.find((p) => p.key === key) : null;
  if (tr.from === tr.to) Object.assign(data, loopEnds(card, port));
  else if (port) data.se = `${port.x}px ${port.y}px`;
  if (port) data.port = key;
  if (port && tr.on === "button") data.label = pressLabel(tr);
  return data;
}

/** A self-loop's ends: out of its port (or the title's right) and back in just below, beside the card. */
function loopEnds(card, port) {
  const w = card ? card.w / 2 : 75;
  const h = card ? card.h / 2 : 24;
  const y1 = port ? port.y : (card && card.rows.length ? -h + 17 : 0);
  const y2 = Math.min(y1 + 12, h - 4);
  return { ld: "90deg", lstep: w + 40, lse: `${w}px ${y1}px`, lte: `${w}px ${y2}px` };
}

/** Where states without a saved position go: in rows below everything already placed. */
function spares(doc) {
  let bottom = null;
  let index = 0;
  return () => {
    if (bottom === null) {
      const ys = Object.values(doc.layout || {}).map((p) => p.y);
      bottom = ys.length ? ys.reduce((m, y) => Math.max(m, y), -Infinity) : 0;  // no spread: any number of states
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
      const data = nodeData(cy, state);
      const classes = nodeClasses(doc, state);
      if (node.empty()) {
        added.push({ group: "nodes", data, classes, position: pos ? { ...pos } : spare() });
        continue;
      }
      if (prev.states.get(state.id) !== state) {
        if (node.data("h") !== data.h) dropRoutes(node.connectedEdges());
        node.data({ label: data.label, title: data.title, w: data.w, h: data.h, card: data.card });
      }
      syncClasses(node, classes, ["state", "start", "final", "waiting"]);
      if (pos && !node.grabbed()) {
        const cur = node.position();
        if (cur.x !== pos.x || cur.y !== pos.y) {
          node.position({ ...pos });
          dropRoutes(node.connectedEdges());
          node.connectedEdges().forEach(curl);
        }
      }
    }
    if (added.length) cy.add(added);
    const newEdges = [];
    const changedStates = new Set([...states.values()].filter((s) => prev.states.get(s.id) !== s).map((s) => s.id));
    for (const tr of transitions.values()) {
      if (prev.transitions.get(tr.id) === tr && !changedStates.has(tr.from)) continue;
      const edge = cy.getElementById(edgeKey(tr.id));
      const data = edgeData(tr, cy.getElementById(nodeKey(tr.from)).data("card"));
      const loop = tr.from === tr.to ? "loop" : "";
      if (edge.nonempty() && (edge.data("source") !== data.source || edge.data("target") !== data.target)) {
        edge.remove();  // endpoints of a Cytoscape edge cannot move; draw it anew
      } else if (edge.nonempty()) {
        if (edge.data("label") !== data.label) edge.data("label", data.label);
        for (const key of ["se", "ld", "lstep", "lse", "lte", "port"]) {
          if (edge.data(key) !== data[key]) {
            if (data[key] === undefined) edge.removeData(key); else edge.data(key, data[key]);
          }
        }
        syncClasses(edge, loop, ["loop"]);
        continue;
      }
      newEdges.push({ group: "edges", data, classes: loop });
    }
    if (newEdges.length) cy.add(newEdges).forEach(curl);
    for (const id of changedStates) cy.getElementById(nodeKey(id)).connectedEdges().forEach(curl);
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

/** Run the layered layout (layout.js) and resolve once positions are final and the view shows them. */
export async function autoLayout(cy, options = {}) {
  const { elkLayout, releaseLayout } = await import("./layout.js");  // loaded when first needed: pages that only draw skip it
  try {
    await elkLayout(cy, { aspect: Math.max(0.5, cy.width() / Math.max(1, cy.height())), ...options });
  } finally {
    releaseLayout();
  }
  cy.viewport(statesViewport(cy, options.viewport));
}

// Room for the widest border (style.js) around a state's size: enough to fit the view to the states without
// asking Cytoscape, which would first apply every element's style.
const BORDER = 3;

/**
 * The zoom and pan that show every state, found from the states' positions alone: `cy.fit` would measure
 * every label and route every edge first, which takes seconds on a 1,000-state flow.
 */
export function statesViewport(cy, { padding = 40, maxZoom = 1.2, reserve = null } = {}) {
  let x1 = Infinity; let y1 = Infinity; let x2 = -Infinity; let y2 = -Infinity;
  cy.nodes().forEach((n) => {
    const p = n.position();
    const hw = (n.data("w") || 150) / 2 + BORDER;
    const hh = (n.data("h") || 44) / 2 + BORDER;
    x1 = Math.min(x1, p.x - hw); x2 = Math.max(x2, p.x + hw);
    y1 = Math.min(y1, p.y - hh); y2 = Math.max(y2, p.y + hh);
  });
  if (x1 === Infinity) return { zoom: cy.zoom(), pan: cy.pan() };
  // The last layout's routes (layout.js) may pass outside the cards, down the left margin of wrapped rows.
  const routes = cy.scratch("routesBox");
  if (routes) {
    x1 = Math.min(x1, routes.x1 - BORDER); x2 = Math.max(x2, routes.x2 + BORDER);
    y1 = Math.min(y1, routes.y1 - BORDER); y2 = Math.max(y2, routes.y2 + BORDER);
  }
  // The view's free part: `reserve` ({w, h}, a panel in the bottom-right corner such as the minimap) is kept
  // clear by fitting beside it or above it, whichever shows the flow larger.
  const fitIn = (w, h) => Math.min((w - 2 * padding) / (x2 - x1), (h - 2 * padding) / (y2 - y1));
  const areas = reserve
    ? [{ w: cy.width() - reserve.w, h: cy.height() }, { w: cy.width(), h: cy.height() - reserve.h }]
    : [{ w: cy.width(), h: cy.height() }];
  const area = areas.reduce((best, a) => (fitIn(a.w, a.h) > fitIn(best.w, best.h) ? a : best));
  const zoom = Math.max(cy.minZoom(), Math.min(maxZoom, cy.maxZoom(), fitIn(area.w, area.h)));
  return { zoom, pan: { x: area.w / 2 - zoom * (x1 + x2) / 2, y: area.h / 2 - zoom * (y1 + y2) / 2 } };
}

export function positionsOf(nodes) {
  const out = {};
  nodes.forEach((n) => { out[n.data("sid")] = { ...n.position() }; });
  return out;
}
