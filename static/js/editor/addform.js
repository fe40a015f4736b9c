// "+ transition" under the state form: a target picker and the state's own triggers (its buttons'
// payloads, valid input, anything else), so a button's transition is never typed by hand.
import { t } from "../i18n.js";
import { stateOf, payloadsOf } from "./doc.js";

function option(value, text) {
  const o = document.createElement("option");
  o.value = value;
  o.textContent = text;
  return o;
}

/** The triggers offered for a new transition out of `state`. */
export function triggersOf(state) {
  const out = payloadsOf(state).map((p) => [`button:${p}`, t("button: {payload}", { payload: p })]);
  if (state.input) out.push(["input", t("valid input")]);
  out.push(["else", t("anything else")]);
  return out;
}

function triggerOf(value) {
  if (value.startsWith("button:")) return { on: "button", payload: value.slice("button:".length) };
  return { on: value };
}

/** Put the current choices in `select`, keeping what was chosen while it is still offered. */
function refill(select, choices, fallback) {
  const kept = select.value;
  select.replaceChildren(...choices.map(([v, text]) => option(v, text)));
  select.value = choices.some(([v]) => v === kept) ? kept : fallback;
}

/** The block's choices from the document as it is now: a saved button is a trigger at once. */
function fill(box, store, sid) {
  const state = stateOf(store.doc, sid);
  if (!state) return;
  const triggers = triggersOf(state);
  refill(box.querySelector("select.on"), triggers, triggers[0][0]);
  const states = (store.doc.states || []).map((s) => [s.id, s.title ? `${s.title} (${s.id})` : s.id]);
  refill(box.querySelector("select.to"), states, sid);
}

function build(sid, addTransition) {
  const box = document.createElement("fieldset");
  box.className = "add-transition";
  box.dataset.state = sid;
  const legend = document.createElement("legend");
  legend.textContent = t("+ transition");
  const on = document.createElement("select");
  on.className = "on";
  on.setAttribute("aria-label", t("Fires on"));
  const to = document.createElement("select");
  to.className = "to";
  to.setAttribute("aria-label", t("Goes to"));
  const add = document.createElement("button");
  add.type = "button";
  add.className = "small";
  add.textContent = t("Add transition");
  add.addEventListener("click", () => addTransition(sid, to.value, triggerOf(on.value)));
  const row = document.createElement("div");
  row.className = "add-row";
  const onLabel = document.createElement("label");
  onLabel.append(t("Fires on"), on);
  const toLabel = document.createElement("label");
  toLabel.append(t("Goes to"), to);
  row.append(onLabel, toLabel, add);
  box.append(legend, row);
  return box;
}

/** Add the block to the panel whenever it shows a state form; its choices follow the document. */
export function installAddTransition(panel, store, addTransition) {
  document.body.addEventListener("htmx:afterSettle", () => {
    const form = panel.querySelector('form[hx-post*="/edit/state/"]');
    if (!form) return;
    const sid = decodeURIComponent(form.getAttribute("hx-post").split("/").pop());
    if (!stateOf(store.doc, sid)) return;
    let box = panel.querySelector(".add-transition");
    if (box && box.dataset.state !== sid) {
      box.remove();
      box = null;
    }
    if (!box) {
      box = build(sid, addTransition);
      // The document may change after the form settles (a save's answer): look again when it is used.
      box.addEventListener("focusin", () => fill(box, store, sid));
      box.addEventListener("pointerdown", () => fill(box, store, sid));
    }
    if (box.previousElementSibling !== form) form.after(box);
    fill(box, store, sid);
  });
}
