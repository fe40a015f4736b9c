// The versions page: draws a diff (sent by the server as JSON in data-graph) on a read-only graph.
import { createGraph, autoLayout } from "./editor/graph.js";
import { TITLE_SIZE } from "./editor/cards.js";
import { triggerLabel } from "./editor/labels.js";

// A self-loop beside its box, drawn from the box's right side (style.js), so it is never inside the state.
const LOOP = { ld: "90deg", lstep: TITLE_SIZE.w / 2 + 40, lse: `${TITLE_SIZE.w / 2}px -6px`, lte: `${TITLE_SIZE.w / 2}px 6px` };

function draw() {
  const container = document.getElementById("diff-canvas");
  if (!container || container.dataset.drawn) return;
  container.dataset.drawn = "1";
  const graph = JSON.parse(container.dataset.graph);
  const cy = createGraph(container, { interactive: false, cards: false });
  cy.add(graph.nodes.map((n, i) => ({
    group: "nodes",
    data: { id: `s:${n.id}`, sid: n.id, label: n.label, w: TITLE_SIZE.w, h: TITLE_SIZE.h },
    classes: [n.status === "same" ? "" : `diff-${n.status}`, n.final ? "final" : "", n.id === graph.start ? "start" : ""].join(" "),
    position: { x: (i % 5) * 190, y: Math.floor(i / 5) * 100 },
  })));
  cy.add(graph.edges.filter((e) => cy.getElementById(`s:${e.target}`).nonempty()).map((e) => ({
    group: "edges",
    data: { id: `t:${e.id}`, tid: e.id, source: `s:${e.source}`, target: `s:${e.target}`, label: triggerLabel(e.trigger),
            ...(e.source === e.target ? LOOP : {}) },
    classes: [e.status === "same" ? "" : `diff-${e.status}`, e.source === e.target ? "loop" : ""].join(" "),
  })));
  // Always laid out here: the editor's positions are for its larger cards and its own routes, so on these
  // title boxes their edges crossed other states and labels landed on the wrong edges.
  autoLayout(cy);
  window.botflowDiff = cy;
}

document.body.addEventListener("htmx:afterSettle", draw);
draw();
