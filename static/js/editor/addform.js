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

/** Add the block to the panel whenever it shows a state form. */
export function installAddTransition(panel, store, addTransition) {
  document.body.addEventListener("htmx:afterSettle", () => {
    const form = panel.querySelector('form[hx-post*="/edit/state/"]');
    if (!form || panel.querySelector(".add-transition")) return;
    const sid = decodeURIComponent(form.getAttribute("hx-post").split("/").pop());
    const state = stateOf(store.doc, sid);
    if (!state) return;
    const box = document.createElement("fieldset");
    box.className = "add-transition";
    const legend = document.createElement("legend");
    legend.textContent = t("+ transition");
    const on = document.createElement("select");
    on.setAttribute("aria-label", t("Fires on"));
    on.append(...triggersOf(state).map(([v, text]) => option(v, text)));
    const to = document.createElement("select");
    to.setAttribute("aria-label", t("Goes to"));
    to.append(...(store.doc.states || []).map((s) => option(s.id, s.title ? `${s.title} (${s.id})` : s.id)));
    to.value = sid;
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
    form.after(box);
  });
}
