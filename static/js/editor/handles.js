// Drawing transitions: a handle appears on the hovered state; drag it onto another state (or back onto
// the same one for a self-loop) to add a transition. A card's ports (overlay.js) start the same gesture
// with their trigger (a button's payload, or valid input). Built on cytoscape-edgehandles.
import { t } from "../i18n.js";

export function installEdgeDrawing(cy, container, onConnect) {
  const eh = cy.edgehandles({
    canConnect: () => true,  // self-loops are legitimate transitions
    edgeParams: () => ({ data: { label: "" } }),
    hoverDelay: 60,
    snap: true,
    snapThreshold: 24,
    snapFrequency: 30,
    noEdgeEventsInDraw: false,  // true restyles every edge at each start and end of a drag: slow on big flows
    disableBrowserGestures: true,
  });

  const handle = document.createElement("div");
  handle.className = "edge-handle";
  handle.title = t("Drag to another state to add a transition");
  handle.hidden = true;
  container.appendChild(handle);
  let handleNode = null;
  let drawing = false;
  let trigger = null;  // what the transition being drawn fires on, when started from a port

  function place(node) {
    const box = node.renderedBoundingBox({ includeLabels: false, includeOverlays: false });
    // Just under the card's middle, never over the card (tiny when zoomed out) so a click still selects it;
    // its right side holds the ports of its buttons and input.
    handle.style.left = `${(box.x1 + box.x2) / 2 - 7}px`;
    handle.style.top = `${box.y2 + 1}px`;
  }

  function show(node) {
    if (drawing) return;
    handleNode = node;
    place(node);
    handle.hidden = false;
  }

  function hide() {
    if (drawing) return;
    handle.hidden = true;
    handleNode = null;
  }

  cy.on("mouseover", "node", (e) => { if (!e.target.hasClass("eh-ghost-node")) show(e.target); });
  cy.on("grab pan zoom", hide);
  cy.on("tap", (e) => { if (e.target === cy) hide(); });
  cy.on("position", "node", (e) => { if (handleNode && e.target.same(handleNode)) place(handleNode); });
  cy.on("remove", "node", (e) => { if (handleNode && e.target.same(handleNode)) hide(); });
  container.addEventListener("mouseleave", (e) => { if (e.relatedTarget !== handle) hide(); });

  // The gesture starts outside Cytoscape's canvas, so feed it the pointer ourselves.
  // The canvas's place, read once per gesture: reading it at every move would make the browser lay out the
  // page (the cards too) again and again while the mouse moves.
  let rect = null;
  function pointer(e) {
    if (!rect) rect = container.getBoundingClientRect();
    const pan = cy.pan();
    const zoom = cy.zoom();
    return { x: (e.clientX - rect.left - pan.x) / zoom, y: (e.clientY - rect.top - pan.y) / zoom };
  }
  function move(e) { eh.update(pointer(e)); }
  function up(e) {
    window.removeEventListener("mousemove", move);
    window.removeEventListener("mouseup", up);
    eh.update(pointer(e));
    rect = null;
    eh.snap();
    eh.stop();
    drawing = false;
    handle.classList.remove("active");
    hide();
  }
  function begin(node, e, on) {
    rect = null;
    e.preventDefault();
    e.stopPropagation();
    drawing = true;
    trigger = on;
    eh.start(node);
    eh.update(pointer(e));
    window.addEventListener("mousemove", move);
    window.addEventListener("mouseup", up);
  }
  handle.addEventListener("mousedown", (e) => {
    if (!handleNode || e.button !== 0) return;
    handle.classList.add("active");
    begin(handleNode, e, null);
  });

  cy.on("ehcomplete", (event, source, target, added) => {
    added.remove();  // the document decides what is drawn
    onConnect(source.data("sid"), target.data("sid"), trigger);
  });
  /** Start drawing from `node` with a port's trigger (`button:<payload>` or `input`). */
  function fromPort(node, port, e) {
    hide();
    const on = port === "input" ? { on: "input" } : { on: "button", payload: port.slice("button:".length) };
    begin(node, e, on);
  }
  return { eh, fromPort };
}
