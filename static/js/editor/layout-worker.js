// Runs ELK's layered layout off the page's thread, so arranging a big flow never freezes the editor.
/* global ELK, importScripts */
importScripts("/static/vendor/elkjs/0.12.1/elk.bundled.js");

const elk = new ELK();
// ELK's bundle installs its own message handler when it finds itself in a worker; this one replaces it.
self.onmessage = (event) => {
  const { id, graph } = event.data;
  elk.layout(graph).then(
    (laidOut) => self.postMessage({ id, graph: laidOut }),
    (error) => self.postMessage({ id, error: String((error && error.message) || error) }),
  );
};
