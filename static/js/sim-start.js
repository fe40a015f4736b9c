// The simulator's "start from a state" form: the state picked by its title, the dialog's data as name and
// value rows (pre-filled with the names the state reads). A value is a number where the flow saves that
// name from a number input, text otherwise; a row left without a value is left out.
import { api } from "./api.js";
import { t } from "./i18n.js";

const DATA_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const NUMBER_INPUTS = new Set(["number", "integer"]);

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** The states of `doc` as the picker lists them: id and the title a person reads (the id where none). */
export function stateOptions(doc) {
  return (doc?.states || []).filter((s) => s && typeof s.id === "string")
    .map((s) => ({ id: s.id, label: typeof s.title === "string" && s.title.trim() ? s.title : s.id }));
}

/** Names the flow saves from a number input: their values are sent as numbers. */
export function numberNames(doc) {
  return new Set((doc?.states || []).map((s) => s?.input)
    .filter((i) => i && NUMBER_INPUTS.has(i.type) && typeof i.save_as === "string").map((i) => i.save_as));
}

/** The data the rows describe, or {error} in the reader's words. `rows` are [{name, value}] as typed. */
export function rowsData(rows, numbers) {
  const data = {};
  for (const { name: raw, value } of rows) {
    const name = raw.trim();
    if (!name && !value.trim()) continue;
    if (!name) return { error: t("Name the value {value}, or remove its row.", { value }) };
    if (!DATA_NAME.test(name)) {
      return { error: t("“{name}” cannot be a data name: use Latin letters, digits and _, not starting with a digit.", { name }) };
    }
    if (Object.hasOwn(data, name)) return { error: t("“{name}” is listed twice: keep one row.", { name }) };
    if (!value.trim()) continue;
    if (numbers.has(name)) {
      const n = Number(value.trim().replace(",", "."));
      if (!Number.isFinite(n)) return { error: t("“{name}” is a number in this flow: enter digits.", { name }) };
      data[name] = n;
    } else {
      data[name] = value;
    }
  }
  return { data };
}

export class StartBox {
  constructor(form, { readsUrl, flowDoc }) {
    this.form = form;
    this.readsUrl = readsUrl;
    this.flowDoc = flowDoc;
    this.state = form.querySelector("[data-sim-start-state]");
    this.rows = form.querySelector("[data-sim-start-rows]");
    this.error = form.querySelector("[data-sim-start-error]");
    form.querySelector("[data-sim-start-add]").addEventListener("click", () => this.addRow("", "").focus());
    form.querySelector("[data-sim-start-cancel]").addEventListener("click", () => { form.hidden = true; });
    this.state.addEventListener("change", () => this.prefill());
  }

  /** Open on `state` (the selection, else the flow's start): the picker filled, its names as rows. */
  async open(state) {
    const doc = this.flowDoc();
    const options = stateOptions(doc);
    this.state.replaceChildren(...options.map((o) => new Option(o.label, o.id)));
    const start = options.some((o) => o.id === state) ? state : (doc?.start || options[0]?.id || "");
    this.state.value = start;
    this.rows.replaceChildren();
    this.error.textContent = "";
    const ok = await this.prefill();
    this.form.hidden = false;
    this.state.focus();
    return ok;
  }

  /** The names the chosen state reads, added as rows; rows with a value typed are kept. */
  async prefill() {
    const res = await api("GET", `${this.readsUrl}?state=${encodeURIComponent(this.state.value)}`);
    if (!res.ok) {
      this.error.textContent = t("That state cannot be read.");
      return false;
    }
    const typed = this.typed().filter((r) => r.name.trim() && r.value.trim());
    this.rows.replaceChildren();
    for (const row of typed) this.addRow(row.name, row.value);
    for (const name of res.data.keys || []) {
      if (!typed.some((r) => r.name.trim() === name)) this.addRow(name, "");
    }
    if (!this.rows.children.length) this.addRow("", "");
    return true;
  }

  /** One name/value row; returns the field to type in first. */
  addRow(name, value) {
    const n = this.rows.children.length + 1;
    const row = el("div", "sim-var");
    const nameInput = el("input");
    Object.assign(nameInput, { type: "text", value: name, placeholder: t("name"), spellcheck: false });
    nameInput.dataset.simVarName = "";
    nameInput.setAttribute("aria-label", t("Name of data {n}", { n }));
    const valueInput = el("input");
    Object.assign(valueInput, { type: "text", value, placeholder: t("value") });
    valueInput.dataset.simVarValue = "";
    valueInput.setAttribute("aria-label", name ? t("Value of {name}", { name }) : t("Value of data {n}", { n }));
    const remove = el("button", "small", "✕");
    remove.type = "button";
    remove.setAttribute("aria-label", name ? t("Remove {name}", { name }) : t("Remove data {n}", { n }));
    remove.addEventListener("click", () => row.remove());
    row.append(nameInput, valueInput, remove);
    this.rows.append(row);
    return name ? valueInput : nameInput;
  }

  typed() {
    return [...this.rows.querySelectorAll(".sim-var")].map((row) => ({
      name: row.querySelector("[data-sim-var-name]").value, value: row.querySelector("[data-sim-var-value]").value }));
  }

  /** {state, data} to start with, or null after saying what is wrong. */
  read() {
    const found = rowsData(this.typed(), numberNames(this.flowDoc()));
    this.error.textContent = found.error || "";
    return found.error ? null : { state: this.state.value, data: found.data };
  }

  /** The chosen state's title (its id where it has none). */
  title() {
    return this.state.selectedOptions[0]?.textContent || this.state.value;
  }
}
