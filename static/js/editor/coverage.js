// Transition coverage drawn on the canvas: covered edges green, uncovered ones red and dashed.
import { edgeKey } from "./graph.js";

const STYLES = [
  ["edge.cov-covered", { "line-color": "#16a34a", "target-arrow-color": "#16a34a", width: 3 }],
  ["edge.cov-uncovered", { "line-color": "#dc2626", "target-arrow-color": "#dc2626", "line-style": "dashed", width: 3 }],
];
let styled = new WeakSet();

function ensureStyles(cy) {
  if (styled.has(cy)) return;
  const style = cy.style();
  for (const [selector, values] of STYLES) style.selector(selector).style(values);
  style.update();
  styled.add(cy);
}

/** Mark every transition by whether some test fires it; null clears the marks. */
export function showCoverage(cy, coverage) {
  ensureStyles(cy);
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

/** Forget the styles of a canvas that was replaced (tests reopen the editor on the same page). */
export function resetCoverageStyles() {
  styled = new WeakSet();
}
