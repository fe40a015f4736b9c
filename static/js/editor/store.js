// The draft being edited: its document, its revision, undo/redo, and one queue that talks to the server.
// Every change is saved at once with `If-Match`; a stale revision stops saving until the page reloads.
import { api, settle, revisionOf } from "../api.js";
import { withTransitionIds } from "./doc.js";
import { t } from "../i18n.js";

const HISTORY_LIMIT = 100;
const PAINT_WAIT = 100;  // ms: a hidden tab gets no frames, and a save must not wait for one

/** Resolves once the frame showing the latest edit has been painted (or after PAINT_WAIT at most). */
function afterPaint() {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, PAINT_WAIT);
    requestAnimationFrame(() => setTimeout(() => { clearTimeout(timer); resolve(); }, 0));
  });
}

export class DraftStore extends EventTarget {
  constructor(flowUrl) {
    super();
    this.flowUrl = flowUrl;
    this.doc = null;
    this.revision = null;
    this.undoStack = [];
    this.redoStack = [];
    this.conflict = false;
    this.saveQueued = false;
    this.chain = Promise.resolve();
    this.running = 0;  // queued or running tasks: a page left now would lose what they carry
  }

  get busy() {
    return this.running > 0;
  }

  emit(type, detail) {
    this.dispatchEvent(new CustomEvent(type, { detail }));
  }

  /**
   * Load the draft from the server. `early` is the same GET sent by the page before the scripts arrived
   * (see editor.html), so the first open does not wait for the scripts and then for the draft.
   */
  async load(early = null) {
    const res = early ? await settle(early) : await api("GET", this.flowUrl);
    if (!res.ok) throw new Error((res.data && res.data.message) || t("The draft cannot be loaded. Reload the page to try again."));
    this.revision = revisionOf(res.headers.get("ETag"));
    this.doc = withTransitionIds(res.data);
    this.emit("change", { doc: this.doc, source: "load" });
    return this.doc;
  }

  /** Serialise work that reads or writes the draft on the server, so nothing overtakes a save. */
  enqueue(task) {
    this.running += 1;
    const run = this.chain.then(task).finally(() => { this.running -= 1; });
    this.chain = run.catch((error) => { console.error(error); });
    return run;
  }

  whenIdle() {
    return this.chain;
  }

  /** Apply a canvas edit: record it for undo, redraw, and save. */
  commit(doc, label = "edit") {
    if (this.conflict || doc === this.doc) return;
    this.undoStack.push(this.doc);
    if (this.undoStack.length > HISTORY_LIMIT) this.undoStack.shift();
    this.redoStack = [];
    this.replace(doc, label);
  }

  replace(doc, label) {
    this.doc = doc;
    this.emit("change", { doc, source: label });
    this.scheduleSave();
  }

  undo() {
    if (this.conflict || !this.undoStack.length) return false;
    this.redoStack.push(this.doc);
    this.replace(this.undoStack.pop(), "undo");
    return true;
  }

  redo() {
    if (this.conflict || !this.redoStack.length) return false;
    this.undoStack.push(this.doc);
    this.replace(this.redoStack.pop(), "redo");
    return true;
  }

  /**
   * One save per burst of edits: the queued save sends whatever the document is when it runs. It starts
   * after the edit is on screen, so encoding a big document never delays the frame that shows the edit.
   */
  scheduleSave() {
    if (this.saveQueued) return;
    this.saveQueued = true;
    this.emit("saving", {});
    this.enqueue(() => afterPaint().then(() => this.save()));
  }

  async save() {
    this.saveQueued = false;
    if (this.conflict) return;
    const sent = this.doc;
    const res = await api("PUT", this.flowUrl, { json: sent, headers: { "If-Match": `"${this.revision}"` } });
    if (res.ok) {
      this.revision = (res.data && res.data.revision) || revisionOf(res.headers.get("ETag"));
      this.emit("saved", { revision: this.revision, doc: sent });
    } else if (res.status === 412 || res.status === 409) {
      this.markConflict();
    } else {
      this.emit("error", { status: res.status, message: (res.data && res.data.message) || t("The change was not saved."), details: res.data && res.data.details });
    }
  }

  markConflict() {
    this.conflict = true;
    this.emit("conflict", {});
  }

  /**
   * A side-panel form saved on the server: take its revision and document, keeping undo. The form's
   * answer carries the stored document; without it (an older page), it is fetched.
   */
  async adoptServerSave(revision, doc = null) {
    if (!revision || revision === this.revision) return;
    const before = this.doc;
    let saved = doc;
    if (!saved) {
      const res = await api("GET", this.flowUrl);
      if (!res.ok) return;
      revision = revisionOf(res.headers.get("ETag")) || revision;
      saved = res.data;
    }
    this.revision = revision;
    this.undoStack.push(before);
    this.redoStack = [];
    this.doc = withTransitionIds(saved);
    this.emit("change", { doc: this.doc, source: "form" });
    this.emit("saved", { revision: this.revision, doc: this.doc, source: "form" });
  }

  /**
   * A side-panel form the server took without a change to store (the field is back to its saved value):
   * the draft on the server is what the page shows, so a refusal shown before is no longer true.
   */
  confirmForm() {
    if (this.saveQueued) return;  // a canvas edit is still on its way; its own answer sets the status
    this.emit("saved", { revision: this.revision, doc: this.doc, source: "form" });
  }

  /** A side-panel form the server refused: nothing was saved; the panel marks the fields. */
  rejectForm(message) {
    this.emit("rejected", { message });
  }
}
