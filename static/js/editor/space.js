// Free space on the canvas: where a new state, or a pasted group, can go without covering another state.

const GAP = 30;  // px kept clear around a placed state
const BIG = 20000;  // group boxes times other boxes past which the search is skipped

/** The states' boxes (model coordinates), optionally without some node ids. */
export function boxesOf(cy, except = new Set()) {
  const boxes = [];
  cy.nodes().forEach((n) => {
    if (except.has(n.id()) || n.hasClass("eh-ghost-node")) return;
    const p = n.position();
    const w = (n.data("w") || 150) / 2;
    const h = (n.data("h") || 44) / 2;
    boxes.push({ x1: p.x - w, y1: p.y - h, x2: p.x + w, y2: p.y + h });
  });
  return boxes;
}

function hits(box, boxes) {
  return boxes.some((b) => box.x1 < b.x2 + GAP && box.x2 > b.x1 - GAP && box.y1 < b.y2 + GAP && box.y2 > b.y1 - GAP);
}

/**
 * The offset nearest to `{x: 0, y: 0}` at which every box of `group` (model boxes) stays clear of `boxes`,
 * tried on rings of growing size around the start, right and down first.
 */
export function freeOffset(group, boxes, step = 40) {
  if (group.length * boxes.length > BIG) {
    // A big paste: beside everything, at once, instead of a search that would keep the page busy for seconds.
    const right = Math.max(...boxes.map((b) => b.x2));
    const left = Math.min(...group.map((g) => g.x1));
    return { x: Math.ceil((right + 3 * GAP - left) / step) * step, y: 0 };
  }
  const fits = (dx, dy) => group.every((g) => !hits({ x1: g.x1 + dx, y1: g.y1 + dy, x2: g.x2 + dx, y2: g.y2 + dy }, boxes));
  if (fits(0, 0)) return { x: 0, y: 0 };
  for (let ring = 1; ring < 200; ring += 1) {
    const candidates = [];
    for (let i = -ring; i <= ring; i += 1) {
      candidates.push([ring, i], [i, ring], [-ring, i], [i, -ring]);
    }
    candidates.sort((a, b) => Math.hypot(a[0], a[1]) - Math.hypot(b[0], b[1]) || b[0] - a[0] || b[1] - a[1]);
    for (const [i, j] of candidates) if (fits(i * step, j * step)) return { x: i * step, y: j * step };
  }
  return { x: 0, y: 0 };
}

/** A free centre for a state of size `size` ({w, h}) near `at`. */
export function freeSpot(cy, at, size) {
  const box = { x1: at.x - size.w / 2, y1: at.y - size.h / 2, x2: at.x + size.w / 2, y2: at.y + size.h / 2 };
  const off = freeOffset([box], boxesOf(cy));
  return { x: at.x + off.x, y: at.y + off.y };
}
