// The layout's routes kept in an edge's data (layout.js writes them, style.js draws them).

const ROUTE = ["sw", "sd", "te", "mx", "my"];

/** Forget the layout's routes of `edges` (their states moved): they are drawn as plain curves again. */
export function dropRoutes(edges) {
  edges.forEach((edge) => {
    if (edge.data("sw") === undefined && edge.data("mx") === undefined) return;
    for (const key of ROUTE) edge.removeData(key);
  });
}

const HEAD_Y = 17;  // the middle of a card's title row, from its top (cards.js)
const CURL = ["cpw", "cpd", "ce"];

/**
 * The curve of a transition the layout has not routed, leaving a port on the right of its card: straight to a
 * state further right; to a state above, below or to the left, a curve around the right side into the
 * target's title, so it never runs through its own card nor hugs the cards' borders.
 */
export function curl(edge) {
  if (edge.data("sw") !== undefined || edge.source().same(edge.target()) || !edge.data("port")) {
    if (edge.data("cpw") !== undefined) for (const key of CURL) edge.removeData(key);
    return;
  }
  const s = edge.source().position();
  const t = edge.target().position();
  const sw = edge.source().data("w") / 2;
  const tw = edge.target().data("w") / 2;
  const th = edge.target().data("h") / 2;
  if (t.x - tw > s.x + sw + 20 || (s.x === t.x && s.y === t.y)) {
    if (edge.data("cpw") !== undefined) for (const key of CURL) edge.removeData(key);
    return;
  }
  const p = { x: Math.max(s.x + sw, t.x + tw) + 70, y: (s.y + t.y) / 2 };
  const dx = t.x - s.x;
  const dy = t.y - s.y;
  const len = Math.hypot(dx, dy);
  const weight = ((p.x - s.x) * dx + (p.y - s.y) * dy) / (len * len);
  const distance = ((p.y - s.y) * dx - (p.x - s.x) * dy) / len;
  const ce = `${tw}px ${Math.min(-th + HEAD_Y, th)}px`;
  if (edge.data("cpw") === weight && edge.data("cpd") === distance && edge.data("ce") === ce) return;
  edge.data({ cpw: weight, cpd: distance, ce });
}
