// A big import without saved places is laid out from its document, before the canvas is made: drawn at
// temporary places first, every state and transition would be styled, measured and curved twice (once there,
// once where the layout puts it), tens of megabytes of work the page's memory keeps the room for afterwards.
// Flows small enough for ELK keep the layout on the canvas (layout.js), which routes the edges around cards.
import { runLayout, elkFits, releaseLayout } from "./layout.js";
import { wrapRows } from "./rows.js";
import { cardOf } from "./cards.js";
import { nodeKey } from "./graph.js";

/** The document as the quick layout reads it: each state's card size, each transition's two ends. */
function quickGraph(doc, cards) {
  const ids = new Set((doc.states || []).map((s) => s.id));
  const children = (doc.states || []).map((state) => {
    const card = cardOf(state, { cards });
    return { id: nodeKey(state.id), width: card.w, height: card.h };
  });
  const edges = (doc.transitions || []).filter((tr) => ids.has(tr.from) && ids.has(tr.to))
    .map((tr) => ({ id: tr.id, sources: [nodeKey(tr.from)], targets: [nodeKey(tr.to)] }));
  return { id: "root", children, edges };
}

/** Whether `doc` is laid out before it is drawn: too big for ELK, which needs the canvas's ports. */
export function laidOutFirst(doc) {
  return !elkFits({ children: doc.states || [], edges: doc.transitions || [] });
}

/**
 * Places for every state of `doc` (by state id, whole pixels, centres), wrapped into rows of the view's shape
 * (`aspect`, width over height). `signal` stops it (an AbortError), `onProgress(fraction)` hears it.
 */
export async function layOutDocument(doc, { aspect = 1.6, cards = true, signal = null, onProgress } = {}) {
  performance.mark("editor:layout-asked");
  let answer;
  try {
    answer = await runLayout(quickGraph(doc, cards), { start: doc.start ? nodeKey(doc.start) : null, engine: "quick", signal, onProgress });
  } finally {
    releaseLayout();
  }
  performance.mark("editor:layout-answered");
  const places = {};
  for (const child of wrapRows(answer.graph, aspect).children || []) {
    places[child.id.slice(2)] = { x: Math.round(child.x + child.width / 2), y: Math.round(child.y + child.height / 2) };
  }
  return places;
}
