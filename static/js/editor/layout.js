// Auto-layout with ELK's layered algorithm (in a Web Worker): states in layers left to right, transitions
// routed at right angles around the states (back edges too), parallel edges apart, labels given their own
// room; long flows are then wrapped into rows (rows.js) so the whole fits a screen. The routes are kept in
// the edges' data (style.js draws them) until a state they touch moves.
import { dropRoutes, curl } from "./routes.js";
import { wrapRows, layerCount } from "./rows.js";

const WORKER_URL = "/static/js/editor/layout-worker.js";
const LABEL_FONT = "11px Helvetica Neue, Helvetica, sans-serif";  // Cytoscape's edge label font (style.js)
const LABEL_PAD = 10;
const LABEL_H = 20;
const HEAD_Y = 17;  // the middle of a card's title row, from its top (cards.js)

let worker = null;
let nextId = 0;
const waiting = new Map();

function layoutWorker() {
  if (worker) return worker;
  worker = new Worker(WORKER_URL);
  worker.onmessage = (event) => {
    const { id, graph, error } = event.data;
    const done = waiting.get(id);
    waiting.delete(id);
    if (done) done(error ? { error } : { graph });
  };
  worker.onerror = (event) => {
    for (const done of waiting.values()) done({ error: event.message || "The layout could not run." });
    waiting.clear();
    worker = null;
  };
  return worker;
}

/** Lay out an ELK graph in the worker; resolves with the graph and its positions. */
function runElk(graph) {
  return new Promise((resolve, reject) => {
    const id = nextId++;
    waiting.set(id, (answer) => (answer.error ? reject(new Error(answer.error)) : resolve(answer.graph)));
    layoutWorker().postMessage({ id, graph });
  });
}

let measureCtx = null;
/** The width of an edge label as Cytoscape draws it. */
function labelWidth(text) {
  if (!measureCtx) {
    measureCtx = document.createElement("canvas").getContext("2d");
    measureCtx.font = LABEL_FONT;
  }
  return Math.ceil(measureCtx.measureText(text).width) + LABEL_PAD;
}

const portId = (nodeId, key) => `${nodeId}|${key}`;

/** The flow on the canvas as an ELK graph: cards with their ports, transitions with their labels. */
export function elkGraph(cy) {
  const states = cy.nodes().filter((n) => !n.hasClass("eh-ghost-node") && n.data("sid") !== undefined);
  const transitions = cy.edges().filter((e) => e.data("tid") !== undefined);
  // A self-loop comes back into its card just below where it left (as graph.js draws it): a port there lets
  // ELK keep the room beside the card for it and its label.
  const loops = new Map();
  transitions.filter((e) => e.isLoop()).forEach((e) => {
    const id = e.data("source");
    if (!loops.has(id)) loops.set(id, new Set());
    loops.get(id).add(e.data("port") || "out");
  });
  const children = states.map((n) => {
    const card = n.data("card") || { w: n.data("w"), h: n.data("h"), ports: [], rows: [] };
    const headY = card.rows.length ? HEAD_Y : card.h / 2;
    // Transitions come in at the height of the first row, where a chain of questions leaves each card (its
    // input): the chain then stays level instead of stepping down a little at every state.
    const inY = card.rows.length ? card.rows[0].top + 12 : card.h / 2;
    return {
      id: n.id(),
      width: card.w,
      height: card.h,
      layoutOptions: { "elk.portConstraints": "FIXED_POS" },
      // Transitions leave from their button's or input's row, or (other triggers) from the title's right.
      ports: [
        { id: portId(n.id(), "in"), x: 0, y: inY, width: 0, height: 0, layoutOptions: { "elk.port.side": "WEST" } },
        { id: portId(n.id(), "out"), x: card.w, y: headY, width: 0, height: 0, layoutOptions: { "elk.port.side": "EAST" } },
        ...card.ports.map((p) => ({
          id: portId(n.id(), p.key), x: card.w, y: p.y + card.h / 2, width: 0, height: 0,
          layoutOptions: { "elk.port.side": "EAST" },
        })),
        ...[...(loops.get(n.id()) || [])].map((key) => {
          const from = key === "out" ? headY : card.ports.find((p) => p.key === key).y + card.h / 2;
          return { id: portId(n.id(), `back:${key}`), x: card.w, y: Math.min(from + 12, card.h - 4), width: 0, height: 0,
            layoutOptions: { "elk.port.side": "EAST" } };
        }),
      ],
    };
  });
  const edges = transitions.map((e) => {
    const label = e.data("label") || "";
    const key = e.data("port") || "out";
    return {
      id: e.id(),
      sources: [portId(e.data("source"), key)],
      targets: [portId(e.data("target"), e.isLoop() ? `back:${key}` : "in")],
      labels: label ? [{ text: label, width: labelWidth(label), height: LABEL_H }] : [],
    };
  });
  return {
    id: "root",
    layoutOptions: {
      "elk.algorithm": "layered",
      "elk.direction": "RIGHT",
      "elk.edgeRouting": "ORTHOGONAL",
      "elk.spacing.nodeNode": "40",
      "elk.spacing.edgeNode": "22",
      "elk.spacing.edgeEdge": "14",
      "elk.spacing.edgeLabel": "4",
      "elk.spacing.labelLabel": "6",
      "elk.spacing.componentComponent": "60",
      "elk.layered.spacing.nodeNodeBetweenLayers": "70",
      "elk.layered.spacing.edgeNodeBetweenLayers": "22",
      "elk.layered.spacing.edgeEdgeBetweenLayers": "12",
      "elk.edgeLabels.placement": "CENTER",
      "elk.layered.nodePlacement.strategy": "NETWORK_SIMPLEX",
      "elk.layered.considerModelOrder.strategy": "NODES_AND_EDGES",
      "elk.layered.cycleBreaking.strategy": "MODEL_ORDER",
      "elk.separateConnectedComponents": "true",
    },
    children,
    edges,
  };
}

/** Where the bend `p` lies for a Cytoscape `segments` edge from centre `s` to centre `t`. */
function segmentOf(s, t, p) {
  const dx = t.x - s.x;
  const dy = t.y - s.y;
  const len2 = dx * dx + dy * dy;
  const weight = ((p.x - s.x) * dx + (p.y - s.y) * dy) / len2;
  const distance = ((p.y - s.y) * dx - (p.x - s.x) * dy) / Math.sqrt(len2);
  return { weight, distance };
}

/** Whether `p` lies on the border of `node` (centred at `c`). */
function onBorder(node, c, p) {
  const w = node.data("w") / 2 + 2;
  const h = node.data("h") / 2 + 2;
  return Math.abs(p.x - c.x) <= w && Math.abs(p.y - c.y) <= h;
}

const round = (v) => Math.round(v * 10) / 10;

/**
 * Move the states to the laid-out graph's places and give each edge its route and its label's place.
 * Returns the new positions (by node id).
 */
export function applyLayout(cy, laidOut) {
  const centres = new Map();
  for (const child of laidOut.children || []) {
    // Whole pixels, as the document keeps them (doc.js): the canvas and the saved places then agree exactly,
    // so redrawing the document later does not take the states for moved and drop their routes.
    centres.set(child.id, { x: Math.round(child.x + child.width / 2), y: Math.round(child.y + child.height / 2) });
  }
  const labels = [];
  cy.batch(() => {
    for (const [id, pos] of centres) cy.getElementById(id).position(pos);
    for (const e of laidOut.edges || []) {
      const edge = cy.getElementById(e.id);
      if (edge.empty()) continue;
      dropRoutes(edge);
      const section = (e.sections || [])[0];
      const s = centres.get(edge.data("source"));
      const t = centres.get(edge.data("target"));
      const label = (e.labels || [])[0];
      if (label) labels.push([edge, { x: label.x + label.width / 2, y: label.y + label.height / 2 }]);
      if (!section || !s || !t || edge.data("source") === edge.data("target")) continue;
      if (s.x === t.x && s.y === t.y) continue;
      // A route that does not start and end on its states (none should) keeps Cytoscape's own curve rather
      // than run into nowhere.
      if (!onBorder(edge.source(), s, section.startPoint) || !onBorder(edge.target(), t, section.endPoint)) continue;
      // A straight route still needs one point for Cytoscape's segments: the middle of the line.
      const points = section.bendPoints && section.bendPoints.length ? section.bendPoints
        : [{ x: (section.startPoint.x + section.endPoint.x) / 2, y: (section.startPoint.y + section.endPoint.y) / 2 }];
      const bends = points.map((p) => segmentOf(s, t, p));
      if (!edge.data("port")) edge.data("se", `${round(section.startPoint.x - s.x)}px ${round(section.startPoint.y - s.y)}px`);
      edge.data({
        te: `${round(section.endPoint.x - t.x)}px ${round(section.endPoint.y - t.y)}px`,
        sw: bends.map((b) => b.weight),
        sd: bends.map((b) => b.distance),
      });
    }
    cy.edges().forEach(curl);
  });
  // Labels go where ELK left room for them: an offset from where Cytoscape would put them on the route.
  cy.batch(() => {
    for (const [edge, at] of labels) {
      const mid = edge.midpoint();
      if (!Number.isFinite(mid.x) || !Number.isFinite(mid.y)) continue;
      edge.data({ mx: round(at.x - mid.x), my: round(at.y - mid.y) });
    }
  });
  return centres;
}

/**
 * Lay out the whole canvas; resolves once the states are in their new places with their routes. A long flow
 * is cut into rows (rows.js) so that it takes the view's shape (`aspect`, width over height).
 */
export async function elkLayout(cy, { aspect = 1.6 } = {}) {
  const laidOut = await runElk(elkGraph(cy));
  return applyLayout(cy, wrapRows(laidOut, aspect));
}

/**
 * Give the edges their routes again when the states still stand where an Auto-layout put them (the routes
 * are not saved, the places are): lay the flow out anew and look for the cut into rows that gives the same
 * places. Resolves whether it found one; nothing moves otherwise.
 */
export async function restoreRoutes(cy) {
  const laidOut = await runElk(elkGraph(cy));
  const saved = new Map();
  cy.nodes().forEach((n) => { saved.set(n.id(), n.position()); });
  const same = (graph) => (graph.children || []).every((c) => {
    const p = saved.get(c.id);
    return p && Math.abs(c.x + c.width / 2 - p.x) <= 1 && Math.abs(c.y + c.height / 2 - p.y) <= 1;
  }) && (graph.children || []).length === saved.size;
  for (let rows = 1; rows <= Math.min(200, layerCount(laidOut)); rows += 1) {
    const wrapped = rows === 1 ? laidOut : wrapRows(laidOut, 1, rows);
    if (same(wrapped)) {
      applyLayout(cy, wrapped);
      return true;
    }
  }
  return false;
}
