// Routes for the transitions of a moved card: at right angles from the button's (or title's) port to the
// target's entry, around every card, as the layout draws them (layout.js). A whole-flow layout is too slow to
// run after each drop; this looks only for the shortest of a few shapes (one bend column, or out, along a
// free channel and in) that crosses no card, and leaves the edge a curve when none is free.
import { setRoute } from "./layout.js";

const HEAD_Y = 17;  // the middle of a card's title row, from its top (cards.js)
const STUB = 18;  // px straight out of a port and into an entry before the first bend
const CLEAR = 10;  // px kept between a route and any card
const REACH = 500;  // px around the two ends within which cards are looked at
const TRIES = 12;  // candidates per coordinate, nearest first

function cardBox(n, pad = 0) {
  const p = n.position();
  const w = (n.data("w") || 150) / 2 + pad;
  const h = (n.data("h") || 44) / 2 + pad;
  return { x1: p.x - w, y1: p.y - h, x2: p.x + w, y2: p.y + h };
}

/** Where the edge leaves its source: the port the `se` data names, else the title row's right end. */
function startPoint(edge) {
  const n = edge.source();
  const p = n.position();
  const se = edge.data("port") ? edge.data("se") : null;
  if (se) {
    const [dx, dy] = se.split(" ").map(parseFloat);
    return { x: p.x + dx, y: p.y + dy };
  }
  const card = n.data("card");
  const h = n.data("h") / 2;
  return { x: p.x + n.data("w") / 2, y: card && card.rows.length ? p.y - h + HEAD_Y : p.y };
}

/** Where the edge enters its target: the left side at the first row (as the layout's entry port). */
function endPoint(edge) {
  const n = edge.target();
  const p = n.position();
  const card = n.data("card");
  const h = n.data("h") / 2;
  return { x: p.x - n.data("w") / 2, y: card && card.rows.length ? p.y - h + card.rows[0].top + 12 : p.y };
}

/** Whether the axis-parallel segment a-b passes through the box (touching its border does not count). */
function crosses(a, b, box) {
  if (a.y === b.y) {
    return a.y > box.y1 && a.y < box.y2 && Math.max(a.x, b.x) > box.x1 && Math.min(a.x, b.x) < box.x2;
  }
  return a.x > box.x1 && a.x < box.x2 && Math.max(a.y, b.y) > box.y1 && Math.min(a.y, b.y) < box.y2;
}

function clear(points, boxes) {
  for (let i = 0; i + 1 < points.length; i += 1) {
    for (const box of boxes) if (crosses(points[i], points[i + 1], box)) return false;
  }
  return true;
}

function length(points) {
  let sum = 0;
  for (let i = 0; i + 1 < points.length; i += 1) sum += Math.abs(points[i + 1].x - points[i].x) + Math.abs(points[i + 1].y - points[i].y);
  return sum;
}

const nearest = (values, to) => [...new Set(values)].sort((a, b) => Math.abs(a - to) - Math.abs(b - to)).slice(0, TRIES);

/** The shortest route (start, bends..., end) from `s` to `t` crossing none of `boxes`, or null. */
export function findRoute(s, t, boxes) {
  const sx = s.x + STUB;
  const tx = t.x - STUB;
  const edgesX = boxes.flatMap((b) => [b.x1 - CLEAR, b.x2 + CLEAR]);
  const edgesY = boxes.flatMap((b) => [b.y1 - CLEAR, b.y2 + CLEAR]);
  let best = null;
  const consider = (points) => {
    if (best && length(points) >= length(best)) return;
    if (clear(points, boxes)) best = points;
  };
  if (tx >= sx) {  // forwards: one column where the route turns
    for (const x of nearest([(sx + tx) / 2, ...edgesX.filter((x) => x >= sx && x <= tx)], (sx + tx) / 2)) {
      consider(s.y === t.y ? [s, t] : [s, { x, y: s.y }, { x, y: t.y }, t]);
    }
    if (best) return best;
  }
  // Out to the right, along a free row, and into the target from its left.
  const mid = (s.y + t.y) / 2;
  const xs1 = nearest([sx, ...edgesX.filter((x) => x >= sx)], sx);
  const xs2 = nearest([tx, ...edgesX.filter((x) => x <= tx)], tx);
  for (const y of nearest([s.y, t.y, ...edgesY], mid)) {
    for (const x1 of xs1) {
      for (const x2 of xs2) {
        consider([s, { x: x1, y: s.y }, { x: x1, y }, { x: x2, y }, { x: x2, y: t.y }, t]);
      }
    }
  }
  return best;
}

/**
 * Route each of `edges` (not self-loops) around the cards, keeping the label on the route; returns how many
 * got a route. The others stay curves (routes.js).
 */
export function rerouteEdges(cy, edges) {
  let routed = 0;
  const nodes = cy.nodes().filter((n) => !n.hasClass("eh-ghost-node"));
  cy.batch(() => {
    edges.forEach((edge) => {
      if (edge.removed() || edge.isLoop()) return;
      const s = startPoint(edge);
      const t = endPoint(edge);
      const area = { x1: Math.min(s.x, t.x) - REACH, x2: Math.max(s.x, t.x) + REACH,
        y1: Math.min(s.y, t.y) - REACH, y2: Math.max(s.y, t.y) + REACH };
      const boxes = [];
      nodes.forEach((n) => {
        const b = cardBox(n, CLEAR - 2);
        if (b.x2 < area.x1 || b.x1 > area.x2 || b.y2 < area.y1 || b.y1 > area.y2) return;
        // The route's own ends sit on its cards' borders: those boxes are shrunk to the card itself.
        boxes.push(n.same(edge.source()) || n.same(edge.target()) ? cardBox(n, -1) : b);
      });
      const points = findRoute(s, t, boxes);
      if (!points) return;
      setRoute(edge, points);
      routed += 1;
    });
  });
  return routed;
}
