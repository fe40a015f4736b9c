// The shortcut overlay (`?`): every key and gesture of the canvas in one list.
import { t } from "../i18n.js";

// Texts are translated as the module loads (the catalogue is read before any module runs).
const ENTRIES = [
  [t("Double-click the canvas"), t("New state")],
  [t("Drag a button's or the input's dot onto a state"), t("Transition on that button or on valid input")],
  [t("Drag the dot under a state onto a state"), t("Transition (input or else)")],
  ["Ctrl+K", t("Find a state")],
  [t("F2 or double-click a state"), t("Rename the state")],
  ["← ↑ → ↓", t("Go to the nearest state that way (on the canvas)")],
  ["Enter", t("Open the selected state's form")],
  ["Delete", t("Delete the selection (asks first)")],
  ["Ctrl+C / Ctrl+V", t("Copy / paste the selected states")],
  ["Ctrl+Z / Ctrl+Shift+Z", t("Undo / redo")],
  ["Ctrl+A", t("Select every state")],
  [t("Escape"), t("Clear the selection, close this list")],
  [t("Mouse wheel"), t("Zoom")],
  ["?", t("Show this list")],
];

export class Shortcuts {
  constructor(host) {
    this.el = document.createElement("div");
    this.el.className = "shortcuts";
    this.el.hidden = true;
    this.el.setAttribute("role", "dialog");
    this.el.setAttribute("aria-label", t("Keyboard shortcuts"));
    const title = document.createElement("h2");
    title.textContent = t("Keyboard shortcuts");
    const list = document.createElement("dl");
    for (const [keys, what] of ENTRIES) {
      const dt = document.createElement("dt");
      dt.textContent = keys;
      const dd = document.createElement("dd");
      dd.textContent = what;
      list.append(dt, dd);
    }
    const close = document.createElement("button");
    close.type = "button";
    close.textContent = t("Close");
    close.addEventListener("click", () => this.hide());
    this.el.append(title, list, close);
    this.el.addEventListener("click", (e) => { if (e.target === this.el) this.hide(); });
    host.append(this.el);
  }

  toggle() {
    this.el.hidden = !this.el.hidden;
  }

  hide() {
    this.el.hidden = true;
  }

  get open() {
    return !this.el.hidden;
  }
}
