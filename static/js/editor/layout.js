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

// ELK routes edges around the cards but its time grows fast with long back edges (a 100-state flow with
// jumps far back takes it tens of seconds on a busy machine): bigger flows get the quick layout at once,
// and ELK gets a budget after which the quick layout takes over.
export const ELK_STATES = 100;
export const ELK_TRANSITIONS = 250;
const ELK_BUDGET_MS = 6000;

let worker = null;
let nextId = 0;
const waiting = new Map();

function layoutWorker() {
  if (worker) return worker;
  const own = new Worker(WORKER_URL);
  worker = own;
  // A stopped worker may still report (a script it was reading when stopped): only the current one counts.
  own.onmessage = (event) => {
    if (own !== worker) return;
    const { id, graph, error, progress, engine } = event.data;
    const job = waiting.get(id);
    if (!job) return;
    if (progress !== undefined) { job.progress(progress); return; }
    waiting.delete(id);
    job.done(error ? { error } : { graph, engine });
  };
  own.onerror = (event) => {
    if (own !== worker) return;
    event.preventDefault();
    worker = null;
    own.terminate();
    const jobs = [...waiting.values()];
    waiting.clear();
    for (const job of jobs) job.done({ error: event.message || "The layout could not run." });
  };
  return own;
}

/** Start the worker ahead of a layout that is coming (a flow opened without its places). */
export function warmLayout() {
  layoutWorker().postMessage({});
}

/** End the worker and everything it was doing (a stop, or ELK past its budget); the next job starts a new one. */
function stopWorker(reason) {
  const stopped = worker;
  worker = null;
  if (stopped) {
    stopped.onmessage = null;
    stopped.onerror = null;
    stopped.terminate();
  }
  const jobs = [...waiting.values()];
  waiting.clear();
  for (const job of jobs) job.done({ stopped: reason });
}

/**
 * End the idle worker once a layout is applied: its heap (the laid-out graph, ELK's bundle when it ran) is
 * tens of megabytes the page no longer needs; the next layout starts a new worker.
 */
export function releaseLayout() {
  if (!waiting.size) stopWorker("released");
}

/** Whether ELK is tried first for a graph of this size. */
export function elkFits(graph) {
  return (graph.children || []).length <= ELK_STATES && (graph.edges || []).length <= ELK_TRANSITIONS;
}

/**
 * Lay out an ELK graph in the worker; resolves with the laid-out graph and the engine that made it ("elk" or
 * "quick"). `signal` stops it (rejecting with an AbortError); `onProgress(fraction)` hears the quick layout.
 */
export function runLayout(graph, { start = null, engine = null, signal = null, onProgress = () => {} } = {}) {
  const chosen = engine || (elkFits(graph) ? "elk" : "quick");
  return new Promise((resolve, reject) => {
    if (signal && signal.aborted) { reject(new DOMException("stopped", "AbortError")); return; }
    const id = nextId++;
    let budget = null;
    const onAbort = () => stopWorker("stopped");
    const done = (answer) => {
      clearTimeout(budget);
      if (signal) signal.removeEventListener("abort", onAbort);
      if (answer.stopped === "budget") {
        resolve(runLayout(graph, { start, engine: "quick", signal, onProgress }));
      } else if (answer.stopped) {
        reject(new DOMException("stopped", "AbortError"));
      } else if (answer.error) {
        reject(new Error(answer.error));
      } else {
        resolve({ graph: answer.graph, engine: answer.engine });
      }
    };
    waiting.set(id, { done, progress: onProgress });
    if (signal) signal.addEventListener("abort", onAbort, { once: true });
    if (chosen === "elk" && engine !== "elk") budget = setTimeout(() => stopWorker("budget"), ELK_BUDGET_MS);
    layoutWorker().postMessage({ id, graph, start, engine: chosen });
  });
}

/** The node id of the flow's start state on the canvas, if any. */
function startNode(cy) {
  const start = cy.nodes(".start");
  return start.nonempty() ? start[0].id() : null;
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
 * Draw `edge` along `points` (its start on the source's border, the bends, its end on the target's border,
 * in model coordinates), as Cytoscape's segments relative to the two states' centres.
 */
export function setRoute(edge, points) {
  const s = edge.source().position();
  const t = edge.target().position();
  if (s.x === t.x && s.y === t.y) return;
  const start = points[0];
  const end = points[points.length - 1];
  // A straight route still needs one point for Cytoscape's segments: the middle of the line.
  const inner = points.length > 2 ? points.slice(1, -1) : [{ x: (start.x + end.x) / 2, y: (start.y + end.y) / 2 }];
  const bends = inner.map((p) => segmentOf(s, t, p));
  dropRoutes(edge);
  if (!edge.data("port")) edge.data("se", `${round(start.x - s.x)}px ${round(start.y - s.y)}px`);
  edge.data({
    te: `${round(end.x - t.x)}px ${round(end.y - t.y)}px`,
    sw: bends.map((b) => b.weight),
    sd: bends.map((b) => b.distance),
  });
  curl(edge);
}

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
  // Routes between wrapped rows run down the left margin, outside every card: Fit must show them too.
  const routes = { x1: Infinity, y1: Infinity, x2: -Infinity, y2: -Infinity };
  for (const e of laidOut.edges || []) {
    for (const p of ((e.sections || [])[0] || {}).bendPoints || []) {
      routes.x1 = Math.min(routes.x1, p.x); routes.x2 = Math.max(routes.x2, p.x);
      routes.y1 = Math.min(routes.y1, p.y); routes.y2 = Math.max(routes.y2, p.y);
    }
  }
  cy.scratch("routesBox", routes.x1 === Infinity ? null : routes);
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
      setRoute(edge, [section.startPoint, ...(section.bendPoints || []), section.endPoint]);
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
export async function elkLayout(cy, { aspect = 1.6, signal = null, onProgress } = {}) {
  const asked = elkGraph(cy);
  performance.mark("editor:layout-asked");
  const { graph, engine } = await runLayout(asked, { start: startNode(cy), signal, onProgress });
  performance.mark("editor:layout-answered");
  if (signal && signal.aborted) throw new DOMException("stopped", "AbortError");
  cy.scratch("layoutEngine", engine);
  const centres = applyLayout(cy, wrapRows(graph, aspect));
  performance.mark("editor:layout-applied");
  return centres;
}

/**
 * Give the edges their routes again when the states still stand where an Auto-layout put them (the routes
 * are not saved, the places are): lay the flow out anew and look for the cut into rows that gives the same
 * places. Resolves whether it found one; nothing moves otherwise.
 */
export async function restoreRoutes(cy) {
  const graph = elkGraph(cy);
  if (!elkFits(graph)) return false;  // the quick layout has no routes to bring back
  const { graph: laidOut, engine } = await runLayout(graph, { start: startNode(cy) });
  if (engine !== "elk") return false;
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
