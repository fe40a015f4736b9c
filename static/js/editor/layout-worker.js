// Lays flows out off the page's thread, so arranging a big flow never freezes the editor: ELK's layered
// layout (routes at right angles around the cards) for a flow it handles in a few seconds, the quick
// layered layout (quick-layout.js) for a bigger one or when ELK gives up (its recursion can overflow the
// worker's stack on long flows). The page may stop the worker at any time (layout.js).
/* global ELK, importScripts, quickLayout */
importScripts("/static/js/editor/quick-layout.js");

// ELK's bundle (1.6 MB) is read only when a flow small enough for it comes: a big import starts sooner.
let elk = null;
function elkLayout(graph) {
  if (!elk) {
    importScripts("/static/vendor/elkjs/0.12.1/elk.bundled.js");
    elk = new ELK();
    self.onmessage = answer;  // the bundle, finding itself in a worker, put in its own handler
  }
  return elk.layout(graph);
}

function quick(id, graph, start, reason) {
  const progress = (fraction) => self.postMessage({ id, progress: fraction });
  self.postMessage({ id, graph: quickLayout(graph, start, progress), engine: "quick", reason });
}

function answer(event) {
  if (!event.data || event.data.id === undefined) return;  // a warm-up: the worker is running
  const { id, graph, start, engine } = event.data;
  if (engine === "quick") {
    quick(id, graph, start, null);
    return;
  }
  let running;
  try {
    running = elkLayout(graph);
  } catch (error) {
    running = Promise.reject(error);
  }
  running.then(
    (laidOut) => self.postMessage({ id, graph: laidOut, engine: "elk" }),
    (error) => quick(id, graph, start, String((error && error.message) || error)),
  );
}
self.onmessage = answer;
