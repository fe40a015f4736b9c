// Finding states in a big flow: the go-to box (Ctrl+K) and the outline of states with their issue counts.
import { allTexts } from "./language.js";
import { t } from "../i18n.js";

const MAX_RESULTS = 50;

/** What a state is found by: its id, title and the text of its messages, lower-cased. */
function haystack(state) {
  return [state.id, state.title || "", ...(state.say || []).flatMap((m) => allTexts(m.text))].join(" ").toLowerCase();
}

/** States matching every word of `query`, titles and ids first. */
export function findStates(doc, query) {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const states = doc.states || [];
  if (!words.length) return states.slice(0, MAX_RESULTS);
  const scored = [];
  for (const state of states) {
    const text = haystack(state);
    if (!words.every((w) => text.includes(w))) continue;
    const head = `${state.id} ${state.title || ""}`.toLowerCase();
    scored.push([words.every((w) => head.includes(w)) ? 0 : 1, state]);
  }
  scored.sort((a, b) => a[0] - b[0]);
  return scored.slice(0, MAX_RESULTS).map(([, s]) => s);
}

function stateItem(state, count) {
  const li = document.createElement("li");
  li.className = "find-item";
  li.dataset.state = state.id;
  li.setAttribute("role", "option");
  const title = document.createElement("span");
  title.className = "find-title";
  title.textContent = state.title || state.id;
  const id = document.createElement("span");
  id.className = "find-id";
  id.textContent = state.id;
  li.append(title, id);
  if (count) {
    const badge = document.createElement("span");
    badge.className = "find-count";
    badge.textContent = String(count);
    badge.title = t("{n} issues", { n: count });
    li.append(badge);
  }
  return li;
}

/** The go-to box: type part of a title, id or message; Enter (or a click) selects the state and shows it. */
export class FindBox {
  constructor(host, store, counts, onPick) {
    this.store = store;
    this.counts = counts;
    this.onPick = onPick;
    this.dialog = document.createElement("div");
    this.dialog.className = "find-box";
    this.dialog.hidden = true;
    this.dialog.setAttribute("role", "dialog");
    this.dialog.setAttribute("aria-label", t("Find a state"));
    this.input = document.createElement("input");
    this.input.type = "search";
    this.input.placeholder = t("Find a state by title, id or message");
    this.input.setAttribute("aria-label", t("Find a state"));
    this.list = document.createElement("ul");
    this.list.setAttribute("role", "listbox");
    this.dialog.append(this.input, this.list);
    host.append(this.dialog);
    this.active = 0;
    this.input.addEventListener("input", () => { this.active = 0; this.render(); });
    this.input.addEventListener("keydown", (e) => this.key(e));
    this.list.addEventListener("mousedown", (e) => {
      const item = e.target.closest(".find-item");
      if (item) { e.preventDefault(); this.pick(item.dataset.state); }
    });
    this.input.addEventListener("blur", () => setTimeout(() => this.close(), 100));
  }

  open() {
    this.dialog.hidden = false;
    this.input.value = "";
    this.active = 0;
    this.render();
    this.input.focus();
  }

  close() {
    this.dialog.hidden = true;
  }

  render() {
    const found = findStates(this.store.doc || {}, this.input.value);
    const counts = this.counts();
    this.items = found.map((s) => stateItem(s, counts.get(s.id)));
    if (!this.items.length) {
      const li = document.createElement("li");
      li.className = "find-none";
      li.textContent = t("No state matches.");
      this.list.replaceChildren(li);
      return;
    }
    this.active = Math.min(this.active, this.items.length - 1);
    this.items[this.active].classList.add("active");
    this.list.replaceChildren(...this.items);
  }

  key(e) {
    e.stopPropagation();
    if (e.key === "Escape") { this.close(); return; }
    if (!this.items || !this.items.length) return;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      this.items[this.active].classList.remove("active");
      this.active = (this.active + (e.key === "ArrowDown" ? 1 : this.items.length - 1)) % this.items.length;
      this.items[this.active].classList.add("active");
      this.items[this.active].scrollIntoView({ block: "nearest" });
    } else if (e.key === "Enter") {
      e.preventDefault();
      this.pick(this.items[this.active].dataset.state);
    }
  }

  pick(id) {
    this.close();
    this.onPick(id);
  }
}

/** The outline: every state in document order with its issue count; a click goes to the state. */
export class Outline {
  constructor(el, store, counts, onPick) {
    this.el = el;
    this.store = store;
    this.counts = counts;
    this.onPick = onPick;
    el.addEventListener("click", (e) => {
      const item = e.target.closest(".find-item");
      if (item) onPick(item.dataset.state);
    });
  }

  toggle() {
    this.el.hidden = !this.el.hidden;
    if (!this.el.hidden) this.render();
  }

  render() {
    if (this.el.hidden) return;
    const counts = this.counts();
    const head = document.createElement("header");
    head.textContent = t("States ({n})", { n: (this.store.doc.states || []).length });
    const list = document.createElement("ul");
    list.append(...(this.store.doc.states || []).map((s) => stateItem(s, counts.get(s.id))));
    this.el.replaceChildren(head, list);
  }
}
