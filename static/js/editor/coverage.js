// Transition coverage drawn on the canvas: covered edges green, uncovered ones red and dashed.
import { edgeKey } from "./graph.js";
import { addStyles } from "./style.js";

const STYLES = [
  ["edge.cov-covered", { "line-color": "#16a34a", "target-arrow-color": "#16a34a", width: 3 }],
  ["edge.cov-uncovered", { "line-color": "#dc2626", "target-arrow-color": "#dc2626", "line-style": "dashed", width: 3 }],
];

/** Mark every transition by whether some test fires it; null clears the marks. */
export function showCoverage(cy, coverage) {
  addStyles(cy, STYLES);
  cy.batch(() => {
    cy.edges(".cov-covered, .cov-uncovered").removeClass("cov-covered cov-uncovered");
    if (!coverage) return;
    const covered = new Set(coverage.covered || []);
    for (const id of covered) cy.getElementById(edgeKey(id)).addClass("cov-covered");
    for (const item of coverage.uncovered || []) {
      const edge = cy.getElementById(edgeKey(item.transition));
      edge.addClass("cov-uncovered");
      if (item.reason) edge.data("coverageReason", item.reason);
    }
  });
}
