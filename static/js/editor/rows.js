// Wrapping a laid-out flow into rows: ELK lays a long flow out as one long band of layers; cut into rows
// stacked top to bottom, it takes the screen's shape. Edges inside a row keep ELK's route; an edge from one
// row to another goes through the free channels: out into the gap after its source's layer, along the
// channel between the rows (or down the left margin past other rows), and into the gap before its target.
// (ELK's own wrapping leaves such edges unrouted or ending where the state was before the cut.)

const GAP = 64;  // px between rows: the channel for edges between rows, with room for their labels
const LAYER_GAP = 70;  // ELK's spacing between layers (layout.js), halved for the vertical runs
const SPREAD = 7;  // px between parallel runs of different edges
const LANE = 24;  // px between the lanes of a channel: a label's height and a little

/** The rows of a cut into `rows` rows: which row each layer is in, and each row's extent. */
function cut(children, layers, rows, minX, maxX) {
  const rowWidth = (maxX - minX) / rows;
  const rowOfLayer = new Map(layers.map((x) => [x, Math.min(rows - 1, Math.floor((x - minX) / rowWidth))]));
  const start = new Map();
  const end = new Map();
  const high = new Map();
  const low = new Map();
  for (const c of children) {
    const r = rowOfLayer.get(Math.round(c.x));
    start.set(r, Math.min(start.get(r) ?? Infinity, c.x));
    end.set(r, Math.max(end.get(r) ?? -Infinity, c.x + c.width));
    high.set(r, Math.min(high.get(r) ?? Infinity, c.y - 20));
    low.set(r, Math.max(low.get(r) ?? -Infinity, c.y + c.height + 20));
  }
  let height = -GAP;
  let width = 0;
  for (const r of start.keys()) {
    height += low.get(r) - high.get(r) + GAP;
    width = Math.max(width, end.get(r) - start.get(r));
  }
  return { rowOfLayer, start, high, low, width, height };
}

/** The cut (1 to 200 rows) whose shape comes closest to the aspect ratio `aspect`, or into `fixed` rows. */
function bestCut(children, aspect, fixed) {
  const minX = children.reduce((m, c) => Math.min(m, c.x), Infinity);  // no spread: any number of states
  const maxX = children.reduce((m, c) => Math.max(m, c.x + c.width), -Infinity);
  const layers = [...new Set(children.map((c) => Math.round(c.x)))].sort((x, y) => x - y);
  if (fixed) return { ...cut(children, layers, fixed, minX, maxX), rows: fixed, minX };
  let best = null;
  let bestCost = Infinity;
  for (let r = 1; r <= Math.min(200, layers.length); r += 1) {
    const c = cut(children, layers, r, minX, maxX);
    const cost = Math.abs(Math.log(c.width / c.height / aspect));
    if (cost < bestCost) { best = { ...c, rows: r, minX }; bestCost = cost; }
  }
  return best;
}

function overlaps(a, b) {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

/** How many layers a laid-out band has: the most rows it can be cut into. */
export function layerCount(laidOut) {
  return new Set((laidOut.children || []).map((c) => Math.round(c.x))).size;
}

/**
 * Cut `laidOut` (ELK's answer, one band) into rows for `aspect` (or into exactly `fixed` rows); returns it
 * changed, or as it was.
 */
export function wrapRows(laidOut, aspect, fixed = null) {
  const children = laidOut.children || [];
  if (children.length < 6) return laidOut;
  const { rows, rowOfLayer, start, high, low, minX } = bestCut(children, aspect, fixed);
  if (rows < 2) return laidOut;
  const rowOf = new Map(children.map((c) => [c.id, rowOfLayer.get(Math.round(c.x))]));
  // Edges between rows run along lanes of the channels between rows (boundary b: under row b), one lane
  // per edge so that neither the runs nor their labels lie on top of each other.
  const lanes = new Map();
  const lane = (b) => { const n = lanes.get(b) || 0; lanes.set(b, n + 1); return n; };
  const plan = (laidOut.edges || []).map((e) => {
    const rs = rowOf.get(e.sources[0].split("|")[0]);
    const rt = rowOf.get(e.targets[0].split("|")[0]);
    const section = (e.sections || [])[0];
    if (!section || rs === undefined || rt === undefined || rs === rt) return { e, rs, rt, section, cross: false };
    const first = rt > rs ? rs : rs - 1;
    const last = rt > rs ? rt - 1 : rt;
    return { e, rs, rt, section, cross: true, first: [first, lane(first)], last: first === last ? null : [last, lane(last)] };
  });
  const gapOf = (b) => Math.max(GAP, 24 + (lanes.get(b) || 0) * LANE);
  // Each row keeps its own height (a long chain drifts downwards in ELK's band) and goes under the last.
  const minY = children.reduce((m, c) => Math.min(m, c.y), Infinity);
  const tops = [];
  let y = minY - 20;
  for (let r = 0; r < rows; r += 1) {
    tops.push(y);
    y += (low.has(r) ? low.get(r) - high.get(r) : 0) + gapOf(r);
  }
  const shift = (r) => ({ dx: minX - start.get(r), dy: tops[r] - high.get(r) });
  const move = (p, r) => { const d = shift(r); return { x: p.x + d.dx, y: p.y + d.dy }; };
  const bottom = (r) => tops[r] + low.get(r) - high.get(r);
  const laneY = ([b, i]) => bottom(b) + 12 + i * LANE + LANE / 2;

  const nodes = children.map((c) => ({ ...c, ...move(c, rowOf.get(c.id)) }));
  const labelsPlaced = [];
  const same = plan.map(({ e, rs, section, cross }) => {
    if (cross || !section || rs === undefined) return e;
    const labels = (e.labels || []).map((l) => ({ ...l, ...move(l, rs) }));
    labelsPlaced.push(...labels);
    return { ...e, labels, sections: [{ ...section, startPoint: move(section.startPoint, rs),
      endPoint: move(section.endPoint, rs), bendPoints: (section.bendPoints || []).map((p) => move(p, rs)) }] };
  });

  let k = 0;
  const out = plan.map((item, index) => {
    if (!item.cross) return same[index];
    const { e, rs, rt, section } = item;
    k += 1;
    const off = ((k % 5) - 2) * SPREAD;  // parallel vertical runs in the same gap stay apart
    const s = move(section.startPoint, rs);
    const t = move(section.endPoint, rt);
    const sx = s.x + LAYER_GAP / 2 + off;
    const tx = t.x - LAYER_GAP / 2 + off;
    const channel = laneY(item.first);
    let bends;
    if (!item.last) {
      bends = [{ x: sx, y: s.y }, { x: sx, y: channel }, { x: tx, y: channel }, { x: tx, y: t.y }];
    } else {  // past other rows: down (or up) the left margin
      const left = minX - LAYER_GAP / 2 - 24 - (k % 10) * SPREAD;
      const end = laneY(item.last);
      bends = [{ x: sx, y: s.y }, { x: sx, y: channel }, { x: left, y: channel }, { x: left, y: end },
        { x: tx, y: end }, { x: tx, y: t.y }];
    }
    const labels = (e.labels || []).map((l) => {
      const x0 = Math.min(sx, bends[2].x);
      const x1 = Math.max(sx, bends[2].x);
      const at = { ...l, x: (x0 + x1) / 2 - l.width / 2, y: channel - l.height / 2 };
      for (let i = 0; i < 40 && labelsPlaced.some((p) => overlaps(at, p)); i += 1) at.x += (i % 2 ? -1 : 1) * (i + 1) * (l.width + 8);
      labelsPlaced.push(at);
      return at;
    });
    return { ...e, labels, sections: [{ ...section, startPoint: s, endPoint: t, bendPoints: bends }] };
  });
  return { ...laidOut, children: nodes, edges: out };
}
