// The flow drawn with Cytoscape.js: states are nodes `s:<id>`, transitions edges `t:<id>` (one id space).
/* global cytoscape */
import { GRAPH_STYLE } from "./style.js";
import { stateLabel, triggerLabel } from "./labels.js";

export const nodeKey = (id) => `s:${id}`;
export const edgeKey = (id) => `t:${id}`;

export function createGraph(container, { interactive = true } = {}) {
  return cytoscape({
    container,
    style: GRAPH_STYLE,
    elements: [],
    layout: { name: "preset" },
    minZoom: 0.05,
    maxZoom: 3,
    boxSelectionEnabled: interactive,
    autoungrabify: !interactive,
    selectionType: "single",
    textureOnViewport: false,
    motionBlur: false,
  });
}

function nodeData(doc, state) {
  return { id: nodeKey(state.id), sid: state.id, label: stateLabel(state), title: state.title || "" };
}

function nodeClasses(doc, state) {
  const classes = ["state"];
  if (state.id === doc.start) classes.push("start");
  if (state.final) classes.push("final");
  if (state.input) classes.push("waiting");
  return classes.join(" ");
}

function edgeData(tr) {
  return { id: edgeKey(tr.id), tid: tr.id, source: nodeKey(tr.from), target: nodeKey(tr.to), label: triggerLabel(tr) };
}

/** Where a state without a saved position goes: below everything already placed. */
function spare(doc, index) {
  const ys = Object.values(doc.layout || {}).map((p) => p.y);
  const bottom = ys.length ? Math.max(...ys) : 0;
  return { x: (index % 6) * 190, y: bottom + 120 + Math.floor(index / 6) * 90 };
}

/**
 * Bring the canvas in line with `doc`, touching only what changed (a 1,000-state flow stays fast).
 * Transitions naming a missing state are not drawn (validation reports them).
 */
export function syncGraph(cy, doc) {
  const states = doc.states || [];
  const known = new Set(states.map((s) => s.id));
  const transitions = (doc.transitions || []).filter((t) => known.has(t.from) && known.has(t.to));
  cy.batch(() => {
    const wantedNodes = new Set(states.map((s) => nodeKey(s.id)));
    const wantedEdges = new Set(transitions.map((t) => edgeKey(t.id)));
    cy.edges().forEach((e) => { if (!wantedEdges.has(e.id())) e.remove(); });
    cy.nodes().forEach((n) => { if (!wantedNodes.has(n.id())) n.remove(); });
    let placed = 0;
    const added = [];
    for (const state of states) {
      const node = cy.getElementById(nodeKey(state.id));
      const data = nodeData(doc, state);
      const classes = nodeClasses(doc, state);
      const pos = doc.layout && doc.layout[state.id];
      if (node.empty()) {
        added.push({ group: "nodes", data, classes, position: pos ? { ...pos } : spare(doc, placed++) });
        continue;
      }
      if (node.data("label") !== data.label || node.data("title") !== data.title) node.data({ label: data.label, title: data.title });
      syncClasses(node, classes, ["state", "start", "final", "waiting"]);
      if (pos && !node.grabbed()) {
        const cur = node.position();
        if (cur.x !== pos.x || cur.y !== pos.y) node.position({ ...pos });
      }
    }
    if (added.length) cy.add(added);
    const newEdges = [];
    for (const tr of transitions) {
      const edge = cy.getElementById(edgeKey(tr.id));
      const data = edgeData(tr);
      const loop = tr.from === tr.to ? "loop" : "";
      if (edge.nonempty() && (edge.data("source") !== data.source || edge.data("target") !== data.target)) {
        edge.remove();  // endpoints of a Cytoscape edge cannot move; draw it anew
      } else if (edge.nonempty()) {
        if (edge.data("label") !== data.label) edge.data("label", data.label);
        syncClasses(edge, loop, ["loop"]);
        continue;
      }
      newEdges.push({ group: "edges", data, classes: loop });
    }
    if (newEdges.length) cy.add(newEdges);
  });
}

function syncClasses(ele, wanted, managed) {
  const want = new Set(wanted.split(" ").filter(Boolean));
  for (const cls of managed) {
    if (want.has(cls) && !ele.hasClass(cls)) ele.addClass(cls);
    if (!want.has(cls) && ele.hasClass(cls)) ele.removeClass(cls);
  }
}

/** Run the dagre layout (top to bottom) and resolve once positions are final. */
export function autoLayout(cy, eles) {
  return new Promise((resolve) => {
    const layout = (eles || cy.elements()).layout({
      name: "dagre", rankDir: "TB", nodeSep: 40, rankSep: 70, edgeSep: 20, animate: false, fit: true, padding: 40,
    });
    layout.one("layoutstop", () => resolve());
    layout.run();
  });
}

export function positionsOf(nodes) {
  const out = {};
  nodes.forEach((n) => { out[n.data("sid")] = { ...n.position() }; });
  return out;
}
