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
  "text-max-width": 136,
  "font-size": 13,
  color: "#0f172a",
  "min-zoomed-font-size": 6,
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

/** The stylesheet; `levels` draws the zoomed-out look for elements without the `detail` class. */
export function graphStyle({ levels = false } = {}) {
  const detail = levels ? ".detail" : "";
  return [
    {
      selector: "node",
      style: {
        shape: "round-rectangle",
        width: 150,
        height: 44,
        "background-color": "#ffffff",
        "border-width": 2,
        "border-color": "#64748b",
      },
    },
    { selector: `node${detail}[label]`, style: NODE_TEXT },
    { selector: "node.waiting", style: { "background-color": "#f8fafc" } },
    {
      selector: "node.start",
      style: { "border-width": 4, "border-color": "#2563eb", "background-color": "#eff6ff" },
    },
    {
      selector: "node.final",
      style: { "border-style": "double", "border-width": 6, "border-color": "#15803d", "background-color": "#f0fdf4", shape: "ellipse" },
    },
    {
      selector: "edge",
      style: { width: 2, "line-color": "#94a3b8", ...(levels ? EDGE_OVERVIEW : EDGE_ROUTED) },
    },
    ...(levels ? [{ selector: "edge.detail", style: EDGE_ROUTED }] : []),
    { selector: `edge${detail}[label]`, style: EDGE_TEXT },
    { selector: "edge.loop", style: { "line-style": "dashed", "line-color": "#7c3aed", "target-arrow-color": "#7c3aed", "loop-direction": "-45deg", "loop-sweep": "-70deg" } },
    ...MARKS,
  ];
}
