// The canvas look: start and final states, loops and parallel edges, issues, simulator and diff marks.
//
// Big flows are drawn in two levels of detail (see detail.js): zoomed out, where no label is legible anyway
// (and an arrowhead is a few pixels), elements lack the `detail` class: no labels, and transitions are plain
// lines from centre to centre; Cytoscape then spends nothing on measuring text, routing edges around node
// borders or drawing arrowheads, for every element in every frame. Elements in view once the zoom makes
// labels legible get `detail` and look exactly as in a small flow.

/** Zoom from which labels are legible: node text is 13px and Cytoscape hides text under 6px on screen. */
export const DETAIL_ZOOM = 6 / 13;

const NODE_TEXT = {
  label: "data(label)",
  "text-valign": "center",
  "text-wrap": "ellipsis",
  "text-max-width": 160,
  "font-size": 13,
  color: "#0f172a",
  "min-zoomed-font-size": 6,
};

// With cards, the canvas's own label is the title seen when zoomed out too far for the card (overlay.js):
// larger, so it stays legible down to a sixth of the size, then it goes and the state is a plain box.
const CARD_TITLE = {
  label: "data(label)",
  "text-valign": "center",
  "text-wrap": "wrap",
  "text-max-width": 224,
  "font-size": 28,
  "font-weight": 600,
  color: "#0f172a",
  "min-zoomed-font-size": 5,
};

const EDGE_TEXT = {
  label: "data(label)",
  "font-size": 11,
  color: "#334155",
  "text-background-color": "#ffffff",
  "text-background-opacity": 0.9,
  "text-background-padding": 2,
  "min-zoomed-font-size": 7,
};

// How edges bend around each other and meet their states, with the arrow at the target.
const EDGE_ROUTED = {
  "curve-style": "bezier",
  "control-point-step-size": 48,
  "target-arrow-shape": "triangle",
  "target-arrow-color": "#94a3b8",
  "arrow-scale": 1.1,
};

// A transition leaving from a button's or the input's port (cards.js), and one routed by the layout
// (layout.js): the bends, the ends and the label's place the layout found, kept in the edge's data.
const EDGE_PORTED = { "source-endpoint": "data(se)" };
const EDGE_LAID_OUT = {
  "curve-style": "segments",
  "segment-weights": "data(sw)",
  "segment-distances": "data(sd)",
  "edge-distances": "node-position",
  "segment-radius": 10,
  "target-endpoint": "data(te)",
};
const EDGE_CURLED = {
  "curve-style": "unbundled-bezier",
  "control-point-weights": "data(cpw)",
  "control-point-distances": "data(cpd)",
  "edge-distances": "node-position",
  "target-endpoint": "data(ce)",
};
const EDGE_LABEL_PLACED = { "text-margin-x": "data(mx)", "text-margin-y": "data(my)" };
// A self-loop leaves its port (or the card's top) and comes back beside it, outside the card: drawn from the
// card's border with room to spare, so Cytoscape never finds its ends inside the state.
const EDGE_LOOP = {
  "curve-style": "bezier",
  "line-style": "dashed",
  "line-color": "#7c3aed",
  "target-arrow-color": "#7c3aed",
  "loop-direction": "-45deg",
  "loop-sweep": "-70deg",
  "control-point-step-size": 64,
};
const LOOP_ENDS = {
  "loop-direction": "data(ld)",
  "loop-sweep": "-25deg",
  "control-point-step-size": "data(lstep)",
  "source-endpoint": "data(lse)",
  "target-endpoint": "data(lte)",
};

// The zoomed-out look of a big flow's transitions: centre to centre, nothing else.
const EDGE_OVERVIEW = {
  "curve-style": "haystack",
  "haystack-radius": 0,
};

const MARKS = [
  { selector: "node.issue-warning", style: { "background-color": "#fef9c3", "border-color": "#ca8a04", "border-style": "dashed" } },
  { selector: "edge.issue-warning", style: { "line-color": "#ca8a04", "target-arrow-color": "#ca8a04", width: 3 } },
  { selector: "node.issue-error", style: { "background-color": "#fee2e2", "border-color": "#dc2626", "border-style": "dashed" } },
  { selector: "edge.issue-error", style: { "line-color": "#dc2626", "target-arrow-color": "#dc2626", width: 3 } },
  { selector: "node.sim-current", style: { "background-color": "#fde68a", "border-color": "#b45309", "border-width": 5 } },
  { selector: "edge.sim-fired", style: { "line-color": "#b45309", "target-arrow-color": "#b45309", width: 5 } },
  { selector: ".diff-added", style: { "background-color": "#cffafe", "border-color": "#0891b2", "line-color": "#0891b2", "target-arrow-color": "#0891b2" } },
  { selector: "node.diff-added", style: { "border-width": 4 } },
  { selector: ".diff-removed", style: { "background-color": "#fee2e2", "border-color": "#dc2626", "line-color": "#dc2626", "target-arrow-color": "#dc2626", "line-style": "dashed", "border-style": "dashed", opacity: 0.8 } },
  { selector: ".diff-changed", style: { "background-color": "#fef3c7", "border-color": "#d97706", "line-color": "#d97706", "target-arrow-color": "#d97706" } },
  { selector: "node.diff-changed", style: { "border-width": 4 } },
  { selector: "edge.diff-added, edge.diff-removed, edge.diff-changed", style: { width: 3 } },
  { selector: "node:selected", style: { "overlay-color": "#2563eb", "overlay-opacity": 0.18, "overlay-padding": 6 } },
  { selector: "edge:selected", style: { "overlay-color": "#2563eb", "overlay-opacity": 0.22, "overlay-padding": 4, width: 4 } },
  { selector: ".eh-preview, .eh-ghost-edge", style: { "line-color": "#2563eb", "target-arrow-color": "#2563eb", "line-style": "dashed", label: "" } },
  { selector: ".eh-ghost-node", style: { width: 1, height: 1, opacity: 0 } },
  { selector: ".eh-ghost-edge.eh-preview-active", style: { opacity: 0 } },
  { selector: ".eh-hover, .eh-target", style: { "border-color": "#2563eb", "border-width": 4 } },
];

/** Zoom below which states are dots (titles are no longer legible there); above DOT_ZOOM_OUT they are boxes. */
export const DOT_ZOOM = 0.14;
export const DOT_ZOOM_OUT = 0.17;

// The farthest look (detail.js switches to it): every state a dot coloured by what it is or what is wrong
// with it, every transition a plain line from centre to centre, no text at all.
const DOT = 90;
const DOTS = [
  { selector: "node", style: { shape: "ellipse", width: DOT, height: DOT, "background-color": "#94a3b8", "border-width": 0 } },
  { selector: "node.start", style: { "background-color": "#2563eb" } },
  { selector: "node.final", style: { "background-color": "#15803d" } },
  { selector: "node.issue-warning", style: { "background-color": "#ca8a04" } },
  { selector: "node.issue-error", style: { "background-color": "#dc2626" } },
  { selector: "node.sim-current", style: { "background-color": "#f59e0b" } },
  { selector: "node.diff-added", style: { "background-color": "#16a34a" } },
  { selector: "node.diff-changed", style: { "background-color": "#d97706" } },
  { selector: "edge", style: { width: 4, "line-color": "#cbd5e1", ...EDGE_OVERVIEW } },
  { selector: "edge.issue-error", style: { "line-color": "#dc2626" } },
  { selector: "edge.issue-warning", style: { "line-color": "#ca8a04" } },
  { selector: "edge.sim-fired", style: { "line-color": "#b45309" } },
];

/**
 * The stylesheet; `levels` draws the zoomed-out look for elements without the `detail` class, `dots` the
 * farthest look (DOTS).
 */
export function graphStyle({ levels = false, cards = true, dots = false } = {}) {
  if (dots) return [...DOTS, ...MARKS.filter((m) => /:selected|eh-/.test(m.selector))];
  const detail = levels ? ".detail" : "";
  return [
    {
      selector: "node",
      style: {
        shape: "round-rectangle",
        width: "data(w)",
        height: "data(h)",
        "background-color": "#ffffff",
        "border-width": 2,
        "border-color": "#64748b",
      },
    },
    { selector: `node${detail}[label]`, style: cards ? CARD_TITLE : NODE_TEXT },
    { selector: "node.waiting", style: { "background-color": "#f8fafc" } },
    {
      selector: "node.start",
      style: { "border-width": 4, "border-color": "#2563eb", "background-color": "#eff6ff" },
    },
    {
      selector: "node.final",
      style: { "border-style": "double", "border-width": 6, "border-color": "#15803d", "background-color": "#f0fdf4" },
    },
    {
      selector: "edge",
      style: { width: 2, "line-color": "#94a3b8", ...(levels ? EDGE_OVERVIEW : EDGE_ROUTED) },
    },
    ...(levels ? [{ selector: "edge.detail", style: EDGE_ROUTED }] : []),
    { selector: `edge${detail}[se]`, style: EDGE_PORTED },
    { selector: `edge${detail}[sw]`, style: EDGE_LAID_OUT },
    { selector: `edge${detail}[cpw]`, style: EDGE_CURLED },
    { selector: `edge${detail}[label]`, style: EDGE_TEXT },
    { selector: `edge${detail}[mx]`, style: EDGE_LABEL_PLACED },
    { selector: `edge${detail}.loop`, style: EDGE_LOOP },
    { selector: `edge${detail}.loop[lse]`, style: LOOP_ENDS },
    ...MARKS,
  ];
}

// Rules other modules lay over the graph's own look (coverage, funnel), per canvas: a change of look
// (DotLevel) replaces the whole stylesheet, and they must come back with it.
const added = new WeakMap();

function applyRules(cy, rules) {
  const style = cy.style();
  for (const [selector, values] of rules) style.selector(selector).style(values);
  style.update();
}

/** Lay `rules` ([selector, style] pairs) over `cy`'s look, once; they survive a change of look. */
export function addStyles(cy, rules) {
  let mine = added.get(cy);
  if (!mine) added.set(cy, (mine = new Set()));
  if (mine.has(rules)) return;
  mine.add(rules);
  applyRules(cy, rules);
}

/** Put the added rules back after the whole stylesheet was replaced. */
export function restoreStyles(cy) {
  for (const rules of added.get(cy) || []) applyRules(cy, rules);
}
