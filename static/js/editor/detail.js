// Levels of detail on a big flow (see style.js): once the zoom makes labels legible, the elements in and
// around the view get the `detail` class; zoomed out again, they lose it. Elements far from the view keep the
// cheap look nobody sees, so zooming into a 1,000-state flow restyles only what comes into view.
import { DETAIL_ZOOM, DOT_ZOOM, DOT_ZOOM_OUT, graphStyle, restoreStyles } from "./style.js";

const SETTLE = 120;  // ms after the view stops moving

/** Give `detail` to the states in or near the view and their transitions; returns what was not yet detailed. */
export function detailInView(cy) {
  const ext = cy.extent();
  const mx = ext.w / 2;
  const my = ext.h / 2;
  const near = cy.nodes().filter((n) => {
    const p = n.position();
    return p.x > ext.x1 - mx && p.x < ext.x2 + mx && p.y > ext.y1 - my && p.y < ext.y2 + my;
  });
  const fresh = near.union(near.connectedEdges()).filter((e) => !e.hasClass("detail"));
  if (fresh.nonempty()) cy.batch(() => fresh.addClass("detail"));
  return fresh;
}

export class DetailLevels {
  constructor(cy) {
    this.cy = cy;
    this.timer = null;
    this.detailed = cy.zoom() >= DETAIL_ZOOM;
    // Anything new while zoomed in is drawn in detail from its first frame.
    cy.on("add", (e) => { if (this.detailed) e.target.addClass("detail"); });
    cy.on("viewport", () => {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.update(), SETTLE);
    });
  }

  update() {
    const cy = this.cy;
    if (cy.zoom() < DETAIL_ZOOM) {
      if (this.detailed) cy.batch(() => cy.elements(".detail").removeClass("detail"));
      this.detailed = false;
      return;
    }
    this.detailed = true;
    detailInView(cy);
  }
}

/**
 * States as dots when zoomed out too far for their titles (style.js): the stylesheet is swapped once when the
 * zoom crosses DOT_ZOOM (and back past DOT_ZOOM_OUT, so a zoom that hovers there does not flip it to and fro).
 */
export class DotLevel {
  constructor(cy, styleOptions) {
    this.cy = cy;
    this.options = styleOptions;
    this.dots = false;
    this.timer = null;
    cy.on("viewport", () => {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.update(), SETTLE);
    });
  }

  /** The look for the current zoom; returns whether it changed. */
  update() {
    const zoom = this.cy.zoom();
    const dots = this.dots ? zoom < DOT_ZOOM_OUT : zoom < DOT_ZOOM;
    if (dots === this.dots) return false;
    this.dots = dots;
    this.cy.style(graphStyle({ ...this.options, dots }));
    restoreStyles(this.cy);
    this.cy.container().dataset.look = dots ? "dots" : "";
    return true;
  }
}
