// The shortcut overlay (`?`): every key and gesture of the canvas in one list.
import { t } from "../i18n.js";

const ENTRIES = [
  ["Double-click the canvas", "New state"],
  ["Drag a button's or the input's dot onto a state", "Transition on that button or on valid input"],
  ["Drag the dot under a state onto a state", "Transition (input or else)"],
  ["Ctrl+K", "Find a state"],
  ["F2 or double-click a state", "Rename the state"],
  ["Delete", "Delete the selection"],
  ["Ctrl+C / Ctrl+V", "Copy / paste the selected states"],
  ["Ctrl+Z / Ctrl+Shift+Z", "Undo / redo"],
  ["Ctrl+A", "Select every state"],
  ["Escape", "Clear the selection, close this list"],
  ["Mouse wheel", "Zoom"],
  ["?", "Show this list"],
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
      dt.textContent = t(keys);
      const dd = document.createElement("dd");
      dd.textContent = t(what);
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
