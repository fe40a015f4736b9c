// The minimap: the whole flow in the corner, with a frame around the part in view; click or drag in it to move
// the view there, turn the wheel over it to zoom. States are drawn as boxes and transitions as straight lines
// from their positions alone (no labels, no styles), so a redraw of a 1,000-state flow costs a few
// milliseconds, and it waits until the canvas is idle: an edit never waits for the minimap.

const REDRAW_DELAY = 200;  // ms after the last change: a drag of many states redraws once, at its end
const COLOURS = [  // first match wins
  ["sim-current", "#f59e0b"],
  ["issue-error", "#dc2626"],
  ["issue-warning", "#ca8a04"],
  ["start", "#2563eb"],
  ["final", "#15803d"],
];
const PLAIN = "#94a3b8";

const idle = window.requestIdleCallback
  ? (fn) => window.requestIdleCallback(fn, { timeout: 1000 })
  : (fn) => setTimeout(fn, 0);

export class Minimap {
  constructor(cy, panel) {
    this.cy = cy;
    this.panel = panel;
    this.canvas = document.createElement("canvas");
    this.canvas.className = "minimap-graph";
    this.frame = document.createElement("div");
    this.frame.className = "minimap-view";
    panel.replaceChildren(this.canvas, this.frame);
    this.map = null;  // model -> minimap: {scale, dx, dy}, fixed by the last drawing
    this.timer = null;
    this.framePending = false;
    this.measure();
    this.schedule();
    cy.on("add remove position class", () => this.schedule());
    cy.on("viewport", () => this.scheduleFrame());
    cy.on("resize", () => { this.measure(); this.redraw(); });
    this.listen();
  }

  measure() {
    const dpr = window.devicePixelRatio || 1;
    this.width = this.panel.clientWidth;
    this.height = this.panel.clientHeight;
    this.canvas.width = Math.round(this.width * dpr);
    this.canvas.height = Math.round(this.height * dpr);
    this.canvas.style.width = `${this.width}px`;
    this.canvas.style.height = `${this.height}px`;
    this.dpr = dpr;
  }

  /** Redraw once things have been quiet for a moment and the page has nothing better to do. */
  schedule() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => idle(() => this.redraw()), REDRAW_DELAY);
  }

  scheduleFrame() {
    if (this.framePending) return;
    this.framePending = true;
    requestAnimationFrame(() => { this.framePending = false; this.placeFrame(); });
  }

  redraw() {
    clearTimeout(this.timer);
    const ctx = this.canvas.getContext("2d");
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, this.canvas.width, this.canvas.height);
    // One pass over the states, with no per-element style or traversal calls: a big flow redraws in
    // a few milliseconds. Sizes come from the states' data (cards.js), not from their styles.
    const at = new Map();
    const groups = new Map();  // colour -> boxes
    let x1 = Infinity; let y1 = Infinity; let x2 = -Infinity; let y2 = -Infinity;
    this.cy.nodes().forEach((n) => {
      if (n.hasClass("eh-ghost-node")) return;
      const p = n.position();
      const w = n.data("w") || 150;
      const h = n.data("h") || 44;
      at.set(n.id(), p);
      x1 = Math.min(x1, p.x - w / 2); x2 = Math.max(x2, p.x + w / 2);
      y1 = Math.min(y1, p.y - h / 2); y2 = Math.max(y2, p.y + h / 2);
      const colour = (COLOURS.find(([cls]) => n.hasClass(cls)) || [null, PLAIN])[1];
      if (!groups.has(colour)) groups.set(colour, []);
      groups.get(colour).push([p.x - w / 2, p.y - h / 2, w, h]);
    });
    if (!at.size || !this.width || !this.height) {
      this.map = null;
      this.placeFrame();
      return;
    }
    const pad = 4;
    const scale = Math.min((this.width - 2 * pad) / (x2 - x1), (this.height - 2 * pad) / (y2 - y1));
    const dx = (this.width - scale * (x2 - x1)) / 2 - scale * x1;
    const dy = (this.height - scale * (y2 - y1)) / 2 - scale * y1;
    this.map = { scale, dx, dy };
    ctx.setTransform(scale * this.dpr, 0, 0, scale * this.dpr, dx * this.dpr, dy * this.dpr);

    ctx.beginPath();
    this.cy.edges().forEach((e) => {
      const s = at.get(e.data("source"));
      const t = at.get(e.data("target"));
      if (!s || !t) return;
      ctx.moveTo(s.x, s.y);
      ctx.lineTo(t.x, t.y);
    });
    ctx.strokeStyle = "#cbd5e1";
    ctx.lineWidth = Math.max(1, 1 / scale);
    ctx.stroke();

    // One fill per colour: far cheaper than switching the fill style box by box.
    for (const [colour, points] of groups) {
      ctx.beginPath();
      for (const [x, y, w, h] of points) ctx.rect(x, y, w, h);
      ctx.fillStyle = colour;
      ctx.fill();
    }
    this.placeFrame();
  }

  /** The frame around what the canvas shows, clipped to the minimap. */
  placeFrame() {
    if (!this.map) {
      this.frame.hidden = true;
      return;
    }
    const { scale, dx, dy } = this.map;
    const ext = this.cy.extent();
    const left = Math.max(0, ext.x1 * scale + dx);
    const top = Math.max(0, ext.y1 * scale + dy);
    const right = Math.min(this.width, ext.x2 * scale + dx);
    const bottom = Math.min(this.height, ext.y2 * scale + dy);
    this.frame.hidden = right <= left || bottom <= top;
    this.frame.style.transform = `translate(${left}px, ${top}px)`;
    this.frame.style.width = `${Math.max(0, right - left)}px`;
    this.frame.style.height = `${Math.max(0, bottom - top)}px`;
  }

  /** Centre the canvas on the model point under a minimap pixel. */
  moveTo(event) {
    if (!this.map) return;
    const rect = this.panel.getBoundingClientRect();
    const { scale, dx, dy } = this.map;
    const x = (event.clientX - rect.left - dx) / scale;
    const y = (event.clientY - rect.top - dy) / scale;
    const zoom = this.cy.zoom();
    this.cy.pan({ x: this.cy.width() / 2 - x * zoom, y: this.cy.height() / 2 - y * zoom });
  }

  listen() {
    const move = (e) => { e.preventDefault(); this.moveTo(e); };
    const up = () => {
      window.removeEventListener("mousemove", move);
      window.removeEventListener("mouseup", up);
    };
    this.panel.addEventListener("mousedown", (e) => {
      if (e.button !== 0) return;
      e.preventDefault();
      this.moveTo(e);
      window.addEventListener("mousemove", move);
      window.addEventListener("mouseup", up);
    });
    this.panel.addEventListener("wheel", (e) => {
      e.preventDefault();
      const level = this.cy.zoom() * Math.pow(1.0015, -e.deltaY);
      this.cy.zoom({ level, renderedPosition: { x: this.cy.width() / 2, y: this.cy.height() / 2 } });
    }, { passive: false });
  }
}
