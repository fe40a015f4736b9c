// A layered layout for flows too big for ELK's (layout-worker.js): loaded into the layout worker with
// importScripts, so it is a classic script that defines `self.quickLayout`. Linear in the flow's size apart
// from a few sorts, and without recursion, so no flow the format allows can overflow the stack.
// Layers come from a breadth-first walk from the start (a back edge or a jump ahead does not stretch the
// flow into one layer per state, as a longest-path layering does), the order inside each layer from a few
// barycentre sweeps; edges are not routed here (the canvas draws them as curves).
/* exported quickLayout */

const QUICK_LAYER_GAP = 110;  // px between layers: room for the curves and their labels
const QUICK_NODE_GAP = 36;  // px between cards of one layer
const QUICK_SWEEPS = 4;

/** Layer of every node: breadth-first from `start`, then from each node not reached yet, in document order. */
function quickLayers(ids, next, start) {
  const layer = new Map();
  const order = [];
  const roots = start && next.has(start) ? [start, ...ids] : ids;
  for (const root of roots) {
    if (layer.has(root)) continue;
    layer.set(root, 0);
    order.push(root);
    for (let i = order.length - 1; i < order.length; i += 1) {
      const id = order[i];
      for (const to of next.get(id)) {
        if (layer.has(to)) continue;
        layer.set(to, layer.get(id) + 1);
        order.push(to);
      }
    }
  }
  return { layer, order };
}

/** One barycentre sweep: each layer sorted by the mean place of its neighbours in the layer before it. */
function quickSweep(layers, neighbours, place, downwards) {
  const count = layers.length;
  for (let k = 1; k < count; k += 1) {
    const l = downwards ? k : count - 1 - k;
    const before = downwards ? l - 1 : l + 1;
    const keyed = layers[l].map((id) => {
      let sum = 0;
      let n = 0;
      for (const other of neighbours.get(id)) {
        const p = place.get(other);
        if (p && p.layer === before) { sum += p.index; n += 1; }
      }
      return { id, key: n ? sum / n : place.get(id).index };
    });
    keyed.sort((a, b) => a.key - b.key);
    layers[l] = keyed.map((k2) => k2.id);
    layers[l].forEach((id, index) => { place.get(id).index = index; });
  }
}

/**
 * Lay out an ELK-shaped graph (children with width and height, edges with port or node ids): returns the
 * graph with each child's x and y (top-left), its edges unrouted. `progress(fraction)` hears how far it got.
 */
function quickLayout(graph, start, progress = () => {}) {
  const children = graph.children || [];
  const ids = children.map((c) => c.id);
  const next = new Map(ids.map((id) => [id, []]));
  const neighbours = new Map(ids.map((id) => [id, []]));
  const nodeOf = (end) => end.split("|")[0];
  for (const e of graph.edges || []) {
    const from = nodeOf(e.sources[0]);
    const to = nodeOf(e.targets[0]);
    if (!next.has(from) || !next.has(to) || from === to) continue;
    next.get(from).push(to);
    neighbours.get(from).push(to);
    neighbours.get(to).push(from);
  }
  const { layer, order } = quickLayers(ids, next, start);
  progress(0.2);
  const layers = [];
  const place = new Map();
  for (const id of order) {
    const l = layer.get(id);
    while (layers.length <= l) layers.push([]);
    place.set(id, { layer: l, index: layers[l].length });
    layers[l].push(id);
  }
  for (let s = 0; s < QUICK_SWEEPS; s += 1) {
    quickSweep(layers, neighbours, place, s % 2 === 0);
    progress(0.2 + (0.6 * (s + 1)) / QUICK_SWEEPS);
  }
  const size = new Map(children.map((c) => [c.id, c]));
  const placed = new Map();
  let x = 0;
  for (const ids2 of layers) {
    const width = ids2.reduce((most, id) => Math.max(most, size.get(id).width), 0);
    const height = ids2.reduce((sum, id) => sum + size.get(id).height, 0) + QUICK_NODE_GAP * (ids2.length - 1);
    let y = -height / 2;
    for (const id of ids2) {
      const c = size.get(id);
      placed.set(id, { x: x + (width - c.width) / 2, y });
      y += c.height + QUICK_NODE_GAP;
    }
    x += width + QUICK_LAYER_GAP;
  }
  progress(1);
  return {
    ...graph,
    children: children.map((c) => ({ ...c, ...placed.get(c.id) })),
    edges: (graph.edges || []).map((e) => ({ id: e.id, sources: e.sources, targets: e.targets, labels: [] })),
  };
}

self.quickLayout = quickLayout;
