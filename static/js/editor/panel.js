// The side panel: forms rendered by the server for the selected state or transition, or the flow settings.
// Form posts go through the draft queue with the current revision in If-Match, so they never overtake a
// canvas save.
/* global htmx */
import { t } from "../i18n.js";
import { editingLanguage, translating } from "./language.js";

/** What a form's answer carries besides the form: the first field error and the stored draft. */
function readAnswer(xhr) {
  const page = new DOMParser().parseFromString(xhr.responseText || "", "text/html");
  const error = page.querySelector("[data-error-for]");
  const draft = page.getElementById("draft-answer");
  let saved = null;
  try { saved = draft && draft.dataset.document ? JSON.parse(draft.dataset.document) : null; } catch { saved = null; }
  return { error: error ? error.textContent.trim() : "", document: saved };
}

export class SidePanel {
  constructor(element, baseUrl, store, exists) {
    this.el = element;
    this.exists = exists;
    this.base = baseUrl;
    this.store = store;
    this.current = null;
    this.onSelect = null;  // set by the editor: select what a saved form now names
    this.pendingPost = null;
    this.readOnly = "";  // for a viewer: why the fields are locked
    this.typing = null;  // a field typed into whose change has not been posted yet
    this.postingUntil = 0;  // a change seen, its post (50 ms later) not queued yet
    this.listen();
    this.guardLeaving();
  }

  /** Whether leaving the page now would lose an edit: typed but not posted, or still being saved. */
  unsaved() {
    return Boolean(this.typing) || performance.now() < this.postingUntil || this.store.busy;
  }

  /** Post what was typed (the field's change), then wait until every save is done. */
  async flush() {
    const field = this.typing;
    if (field && field.isConnected) field.dispatchEvent(new Event("change", { bubbles: true }));
    await new Promise((resolve) => { setTimeout(resolve, 120); });  // the form posts 50 ms after a change
    await this.store.whenIdle();
  }

  /** A link away saves the panel's edit first; a reload or a closed tab asks the browser to confirm. */
  guardLeaving() {
    document.addEventListener("click", async (evt) => {
      const link = evt.target.closest && evt.target.closest("a[href]");
      if (!link || !this.unsaved() || evt.defaultPrevented || evt.button !== 0 || evt.metaKey || evt.ctrlKey
          || evt.shiftKey || evt.altKey || (link.target && link.target !== "_self")) return;
      evt.preventDefault();
      this.store.emit("saving", {});
      await this.flush();
      if (!this.store.conflict && !this.rejected) window.location.assign(link.href);
    }, true);
    window.addEventListener("beforeunload", (evt) => {
      if (!this.unsaved()) return;
      evt.preventDefault();
      evt.returnValue = "";
    });
  }

  url(kind, id) {
    const url = kind === "settings" ? `${this.base}/settings` : `${this.base}/${kind}/${encodeURIComponent(id)}`;
    // In another language than the default, a state's (and the settings') texts are shown for translating.
    return translating() && kind !== "transition" ? `${url}?lang=${encodeURIComponent(editingLanguage())}` : url;
  }

  /** Show the form for ("state"|"transition", id), the flow settings, or a hint. */
  show(kind, id) {
    const key = `${kind}:${id ?? ""}`;
    if (this.current === key && this.language === editingLanguage()) return Promise.resolve();
    this.language = editingLanguage();
    // A refused edit lives only in the form: moving to another element would drop it without a word.
    if (this.rejected && this.current && !this.readOnly
        && !window.confirm(t("The side panel holds a change that was not saved. Leave it and lose that change?"))) {
      if (this.onSelect) this.onSelect(this.current);
      return Promise.resolve();
    }
    this.rejected = false;
    this.current = key;
    if (kind === "none") {
      this.hint(id || t("Select a state or a transition to edit it, or open the flow settings."));
      return Promise.resolve();
    }
    return this.store.enqueue(() => (this.current === key
      ? htmx.ajax("GET", this.url(kind, id), { target: this.el, swap: "innerHTML" }).then(() => {
        this.top(key);
        if (this.readOnly) this.lock();
      })
      : null));
  }

  /** Reload whatever the panel shows (after undo, redo, or an edit on the canvas). */
  refresh() {
    const key = this.current;
    this.current = null;
    if (!key) return;
    const [kind, id] = key.split(/:(.*)/s);
    if (kind === "none" || !this.exists(kind, id)) this.show("none");
    else this.show(kind, id || undefined);
  }

  /** Start a newly selected element's form at its top (the same one reloaded keeps its place). */
  top(key) {
    if (this.shownKey !== key) this.el.scrollTop = 0;
    this.shownKey = key;
  }

  hint(text) {
    this.el.replaceChildren(hintLine(text));
    this.top(null);
  }

  /** A viewer's panel: every field shown, none changeable, and why. */
  lock() {
    const form = this.el.querySelector("form");
    if (!form) return;
    for (const field of form.querySelectorAll("input, select, textarea, button")) field.disabled = true;
    form.prepend(hintLine(this.readOnly));
  }

  /** After a conflict: nothing more is posted, but what the person typed stays readable and copyable. */
  freeze(message) {
    for (const field of this.el.querySelectorAll("input, select, textarea, button")) {
      const text = (field.tagName === "INPUT" && !["checkbox", "radio", "submit", "button"].includes(field.type))
        || field.tagName === "TEXTAREA";
      if (text) field.readOnly = true;
      else field.disabled = true;
    }
    const form = this.el.querySelector("form");
    if (form && message) {
      const note = hintLine(message);
      note.dataset.frozen = "";
      form.prepend(note);
    }
  }

  listen() {
    const inDraftForm = (elt) => elt && elt.closest && elt.closest("[data-draft-form]");
    document.body.addEventListener("input", (evt) => {
      if (!inDraftForm(evt.target) || this.store.conflict) return;
      if (!this.typing) this.store.emit("unsaved", {});
      this.typing = evt.target;
    });
    // The form posts on change (leaving the field); from then on the draft queue knows the edit is pending.
    document.body.addEventListener("change", (evt) => {
      if (!inDraftForm(evt.target)) return;
      this.typing = null;
      this.postingUntil = performance.now() + 1000;
    }, true);
    document.body.addEventListener("htmx:confirm", (evt) => {
      if (!inDraftForm(evt.target) || evt.detail.verb !== "post") return;
      evt.preventDefault();
      this.postingUntil = 0;
      if (this.store.conflict) return;
      this.rejected = false;
      this.store.enqueue(() => new Promise((resolve) => {
        this.pendingPost = resolve;
        evt.detail.issueRequest(true);
      }));
    });
    document.body.addEventListener("htmx:configRequest", (evt) => {
      if (inDraftForm(evt.detail.elt) && evt.detail.verb === "post") {
        // The same revision header the canvas's PUT sends: a draft moved on meanwhile answers 412 to both.
        evt.detail.headers["If-Match"] = `"${this.store.revision}"`;
        // htmx counts a merely focused button as pressed; only a real submit carries its action.
        const trigger = evt.detail.triggeringEvent;
        if (!trigger || trigger.type !== "submit") delete evt.detail.parameters._action;
        // An added row or field is looked for after the answer: it may be below the panel's fold.
        this.fieldsBefore = String(evt.detail.parameters._action || "").startsWith("add")
          ? new Set(fieldNames(evt.detail.elt)) : null;
      }
    });
    document.body.addEventListener("htmx:afterSwap", (evt) => {
      const before = this.fieldsBefore;
      if (!before || evt.detail.target !== this.el) return;
      this.fieldsBefore = null;
      const added = [...this.el.querySelectorAll("input[name], textarea[name], select[name]")]
        .find((el) => el.type !== "hidden" && !before.has(el.name) && el.offsetParent !== null);
      if (!added) return;
      added.scrollIntoView({ block: "center" });
      added.focus({ preventScroll: true });
    });
    // A refusal because the draft moved on must not replace the form: it holds the person's unsaved text.
    document.body.addEventListener("htmx:beforeSwap", (evt) => {
      const status = evt.detail.xhr.status;
      const source = evt.detail.requestConfig && evt.detail.requestConfig.elt;  // detail.elt is the target
      if ((status === 409 || status === 412) && inDraftForm(source)) evt.detail.shouldSwap = false;
    });
    document.body.addEventListener("htmx:afterRequest", async (evt) => {
      if (!this.pendingPost || evt.detail.requestConfig.verb !== "post") return;
      const resolve = this.pendingPost;
      this.pendingPost = null;
      try {
        const xhr = evt.detail.xhr;
        if (xhr.status === 409 || xhr.status === 412) {
          this.store.markConflict();
          return;
        }
        if (xhr.getResponseHeader("X-Botflow-Session") === "expired") {  // the panel says so, with a link
          this.store.emit("error", { status: 401, message: t("Your session has expired.") });
          return;
        }
        const revision = xhr.getResponseHeader("X-Botflow-Revision");
        const select = xhr.getResponseHeader("X-Botflow-Select");
        if (select) this.current = decodeURIComponent(select);
        const answer = readAnswer(xhr);
        if (xhr.getResponseHeader("X-Botflow-Rejected")) {
          this.rejected = true;  // a link away waits: the refused value is only in the form
          this.store.rejectForm(answer.error);
        } else if (!revision || revision === this.store.revision) {
          this.store.confirmForm();  // the status follows this answer, not an earlier refusal
        }
        await this.store.adoptServerSave(revision, answer.document);
        if (select && this.onSelect) this.onSelect(decodeURIComponent(select));
      } finally {
        resolve();
      }
    });
  }
}

/** The names of a form's fields. */
function fieldNames(form) {
  return form && form.elements ? [...form.elements].map((el) => el.name).filter(Boolean) : [];
}

/** A line of the panel's quiet explanation (why it is empty, locked or frozen). */
function hintLine(text) {
  const p = document.createElement("p");
  p.className = "panel-hint";
  p.textContent = text;
  return p;
}
