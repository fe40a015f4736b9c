// The simulator: a chat with the draft (or a frozen version) through the simulate API, on
// the same engine as live traffic, in a sandbox. Announces the current state and the fired transition.
// Every step keeps the sandbox dialog it produced, so a click on it goes back there (state, data,
// history, attempts and timers as they were); a dialog can also start at any state with chosen data.
import { languageNames } from "./editor/language.js";
import { api, loginUrl } from "./api.js";
import { lang, t } from "./i18n.js";
import { fillMessage } from "./markup.js";
import { StartBox } from "./sim-start.js";

/** The dialog's data as a person reads it: one "key: value" line each (a list or object value as written). */
export function dataLines(data) {
  const keys = Object.keys(data || {});
  if (!keys.length) return t("nothing collected yet");
  return keys.map((key) => `${key}: ${typeof data[key] === "string" ? data[key] : JSON.stringify(data[key])}`).join("\n");
}

// What a request button shares in the sandbox: a stand-in contact or place, shaped as MAX sends it.
const SAMPLE_SHARES = {
  contact: { type: "contact", payload: { vcf_info: "BEGIN:VCARD\nVERSION:3.0\nFN:Test User\nTEL:+79990000000\nEND:VCARD",
                                         max_info: { user_id: 1, first_name: "Test", is_bot: false } } },
  location: { type: "location", latitude: 55.7558, longitude: 37.6173 },
};

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function safeUrl(url) {
  return typeof url === "string" && /^https?:\/\//i.test(url) ? url : null;
}

/** What a step did, in the page's language; null in English, where the engine's own sentence says more. */
export function outcomeWords(outcome, transition, state) {
  if (lang === "en" || !outcome) return null;
  if (outcome.startsWith("command:")) {
    const name = outcome.slice("command:".length);
    const said = {
      cancel: () => t("The cancel command dropped the dialog."),
      restart: () => t("The restart command started the dialog over."),
      back: () => t("The back command returned to the previous question."),
      help: () => t("The help command answered; the dialog stays where it was."),
    }[name];
    return said ? said() : t("The command {name} ran.", { name });
  }
  const words = {
    transition: () => t("Transition {id} fired; the dialog is at {state}.", { id: transition, state }),
    completed: () => t("Transition {id} fired and reached a final state; the dialog ended.", { id: transition }),
    opened: () => t("A dialog opened at {state}.", { state }),
    input_invalid: () => t("The input was not accepted; the error message was sent."),
    fallback: () => t("Nothing in this state took the message; the fallback was sent."),
    reminder: () => t("The user was idle; the reminder was sent."),
    expired: () => t("The dialog was idle past its lifetime and ended."),
    held: () => t("The timeout waits for the user's next message."),
    ignored: () => t("Nothing changed."),
  }[outcome];
  return words ? words() : null;
}


// The commands' defaults (flow-format.md): cancel and restart are on with these texts, back and help off.
const COMMAND_DEFAULTS = { cancel: "/cancel", restart: "/start", back: null, help: null };

/** The first text the flow's command `name` takes, or null when the command is off (null, or no match). */
function commandText(doc, name) {
  const commands = (doc && doc.commands) || {};
  if (!Object.prototype.hasOwnProperty.call(commands, name)) return COMMAND_DEFAULTS[name];
  const command = commands[name];
  if (!command) return null;
  if (Array.isArray(command.match)) return typeof command.match[0] === "string" && command.match[0] ? command.match[0] : null;
  return COMMAND_DEFAULTS[name];  // defaults apply field by field
}

// The user_locale MAX sends for a user of each language (its clients send a region with some languages);
// the engine reads only the primary subtag, so any other code is sent as it is.
const MAX_LOCALES = { ru: "ru", en: "en-US", tt: "tt-RU", ba: "ba-RU", kk: "kk-KZ", uz: "uz-UZ", be: "be-BY", uk: "uk-UA",
  de: "de-DE", fr: "fr-FR", es: "es-ES", tr: "tr-TR", zh: "zh-CN" };

export class Simulator extends EventTarget {
  constructor(root, { flowId, beforeSend = () => Promise.resolve(), selectedState = () => null, stateTitle = () => "" }) {
    super();
    this.root = root;
    this.url = `/api/flows/${encodeURIComponent(flowId)}/simulate`;
    this.versionsUrl = `/api/flows/${encodeURIComponent(flowId)}/versions`;
    this.beforeSend = beforeSend;
    this.selectedState = selectedState;
    this.stateTitle = stateTitle;  // a state's title in the editor's document, shown beside its id
    this.log = root.querySelector("[data-sim-log]");
    this.form = root.querySelector("[data-sim-form]");
    this.input = root.querySelector("[data-sim-input]");
    this.source = root.querySelector("[data-sim-source]");
    this.stateOut = root.querySelector("[data-sim-state]");
    this.stateTitleOut = root.querySelector("[data-sim-state-title]");
    this.firedOut = root.querySelector("[data-sim-fired]");
    this.dataOut = root.querySelector("[data-sim-data]");
    this.startBox = root.querySelector("[data-sim-start]");
    this.language = root.querySelector("[data-sim-language]");
    this.busy = false;
    this.steps = [];  // {update, shown, result}: the conversation as it stands (after any step back)
    this.start = null;  // {state, data} when the dialog was started at a chosen state
    this.wire();
    this.restart();
  }

  wire() {
    this.form.addEventListener("submit", (e) => {
      e.preventDefault();
      const text = this.input.value;
      if (!text.trim()) return;
      this.input.value = "";
      this.send({ text }, text);
    });
    this.root.querySelector("[data-sim-restart]").addEventListener("click", () => this.restart());
    for (const chip of this.root.querySelectorAll("[data-sim-say]")) {
      chip.addEventListener("click", () => {
        const text = chip.dataset.simCommand ? commandText(this.flowDoc(), chip.dataset.simCommand) : chip.dataset.simSay;
        if (text) this.send({ text }, text);
      });
    }
    this.syncChips();
    window.botflowEditor?.store?.addEventListener("change", () => this.syncChips());
    const idle = this.root.querySelector("[data-sim-idle]");
    if (idle) {
      idle.addEventListener("click", () => {
        const seconds = Number(this.root.querySelector("[data-sim-idle-seconds]").value || 0);
        if (seconds > 0 && Number.isFinite(seconds)) this.send({ idle: seconds }, null, t("⏱ {seconds} s later", { seconds }));
        else this.note(t("Enter how many seconds pass: a number above 0."), "sim-error");
      });
    }
    const started = this.root.querySelector("[data-sim-started]");
    if (started) started.addEventListener("click", () => this.send({ bot_started: null }, null, t("▶ bot started")));
    this.source.addEventListener("change", () => this.restart());
    // A dialog's language is chosen when it opens: another language is another dialog.
    if (this.language) this.language.addEventListener("change", () => this.restart());
    const from = this.root.querySelector("[data-sim-from]");
    if (from) from.addEventListener("click", () => this.askStart(this.selectedState()));
    const save = this.root.querySelector("[data-sim-save]");
    if (save) {
      save.addEventListener("click", () => {
        if (!this.steps.length) {
          this.note(t("Have a conversation first: a test is made of its steps."), "sim-error");
          return;
        }
        this.dispatchEvent(new CustomEvent("save-test", { detail: { steps: this.steps, start: this.start } }));
      });
    }
    if (this.startBox) {
      this.starter = new StartBox(this.startBox, { readsUrl: `${this.url}/reads`, flowDoc: () => this.flowDoc() });
      this.startBox.addEventListener("submit", (e) => {
        e.preventDefault();
        this.startFromBox();
      });
    }
  }

  sourceValue() {
    return this.source.value === "draft" ? "draft" : Number(this.source.value);
  }

  async loadVersions() {
    const res = await api("GET", this.versionsUrl);
    if (!res.ok || !Array.isArray(res.data)) return;
    const chosen = this.source.value;
    const options = [el("option", "", t("Draft"))];
    options[0].value = "draft";
    for (const v of res.data) {
      const option = el("option", "", t("Version {n}", { n: v.version }) + (v.note ? ` — ${v.note}` : ""));
      option.value = String(v.version);
      options.push(option);
    }
    this.source.replaceChildren(...options);
    this.source.value = [...this.source.options].some((o) => o.value === chosen) ? chosen : "draft";
  }

  /** The editor opened on a copy of a live dialog (?sim=<sandbox id>&source=<version>): continue it here. */
  async openFromUrl() {
    const params = new URLSearchParams(window.location.search);
    const sim = params.get("sim");
    if (!sim) return;
    const source = params.get("source") || "draft";
    if ([...this.source.options].some((o) => o.value === source)) this.source.value = source;
    this.note(t("Opening the copy of the live dialog…"));
    const res = await api("GET", `${this.url}/${encodeURIComponent(sim)}?source=${encodeURIComponent(source)}`);
    if (!res.ok) {
      this.refused(res, t("The copy of the live dialog could not be opened."));
      return;
    }
    const user = params.get("user");
    this.restart(user
      ? t("A copy of the live dialog of user {user} at {state}: continue it here; the live dialog is not touched.", { user, state: res.data.state })
      : t("A copy of a live dialog at {state}: continue it here; the live dialog is not touched.", { state: res.data.state }));
    this.session = sim;
    await this.showEarlier(params.get("bot"), user, Number(params.get("entry")));
    this.facts({ ...res.data, fired: { transition: null, reason: t("Copied from the live dialog."), own: true } });
  }

  flowDoc() {
    return window.botflowEditor?.store?.doc || null;
  }

  /** A command chip shows the text the flow takes for its command, and is hidden while the command is off. */
  syncChips() {
    const doc = this.flowDoc();
    if (!doc) return;
    this.syncLanguages(doc);
    for (const chip of this.root.querySelectorAll("[data-sim-command]")) {
      const text = commandText(doc, chip.dataset.simCommand);
      chip.hidden = !text;
      if (text && chip.dataset.simCommand !== "back" && chip.dataset.simCommand !== "help") chip.textContent = text;
    }
  }

  /** What the live dialog said up to the copied point, greyed above the note (nothing to step back to). */
  async showEarlier(bot, user, entry) {
    if (!bot || !user || !Number.isInteger(entry) || entry < 0) return;
    const res = await api("GET", `/api/bots/${encodeURIComponent(bot)}/users/${encodeURIComponent(user)}/timeline`);
    if (!res.ok || !Array.isArray(res.data) || !res.data[entry]) return;
    // An update entry is the point before its turn; any other entry is after its whole turn (same time).
    const updates = new Set(["message", "button", "bot_started", "event", "timer"]);
    let end = entry;
    if (updates.has(res.data[entry].kind)) end = entry - 1;
    else while (end + 1 < res.data.length && res.data[end + 1].time === res.data[entry].time) end += 1;
    const earlier = [];
    for (const item of res.data.slice(0, end + 1)) {
      if (updates.has(item.kind) && item.text) earlier.push(el("li", "sim-user sim-earlier", item.text));
      else if (item.kind === "reply") earlier.push(this.shown(el("li", "sim-bot sim-earlier"), item));
    }
    this.log.prepend(...earlier);
    this.log.scrollTop = this.log.scrollHeight;
  }

  restart(message) {
    this.session = `sim-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
    this.steps = [];
    this.start = null;
    this.log.replaceChildren(el("li", "sim-system", message || t("New conversation. Type a message to start.")));
    this.stateOut.textContent = "—";
    this.stateTitleOut.textContent = "";
    this.firedOut.textContent = "—";
    this.dataOut.textContent = dataLines({});
    if (this.startBox) this.startBox.hidden = true;
    this.announce(null, null);
  }

  announce(state, transition) {
    document.dispatchEvent(new CustomEvent("botflow:sim", { detail: { state, transition } }));
  }

  note(text, className = "sim-system") {
    const li = el("li", className, text);
    li.dataset.step = String(this.steps.length - 1);
    this.log.append(li);
    this.log.scrollTop = this.log.scrollHeight;
  }

  /** The language picker lists the flow's languages (hidden for a flow in one language). */
  syncLanguages(doc) {
    if (!this.language) return;
    const codes = Array.isArray(doc.languages) ? doc.languages.filter((c) => typeof c === "string") : [];
    const wrap = this.language.closest("[data-sim-language-wrap]") || this.language;
    wrap.hidden = codes.length < 2;
    if ([...this.language.options].map((o) => o.value).join(",") === codes.join(",")) return;
    const kept = this.language.value;
    const names = languageNames();
    this.language.replaceChildren(...codes.map((code) => {
      const option = document.createElement("option");
      option.value = code;
      option.textContent = names(code);
      return option;
    }));
    this.language.value = codes.includes(kept) ? kept : (codes[0] || "");
  }

  /** The user_locale of the simulated user, or null for a flow in one language. */
  userLocale() {
    if (!this.language || this.language.closest("[hidden]") || !this.language.value) return null;
    return MAX_LOCALES[this.language.value] || this.language.value;
  }

  async send(update, shown, note) {
    if (this.busy) return;
    const locale = this.userLocale();
    if (locale && !("idle" in update)) update = { ...update, user_locale: locale };
    this.busy = true;
    this.root.classList.add("busy");
    const index = this.steps.length;
    const added = [];
    if (shown !== null && shown !== undefined) added.push(this.stepItem("sim-user", shown, index));
    if (note) added.push(this.stepItem("sim-system sim-clock", note, index));
    for (const li of added) {
      li.dataset.step = String(index);
      this.log.append(li);
    }
    try {
      await this.beforeSend();
      const res = await api("POST", this.url, { json: { session: this.session, update, source: this.sourceValue() } });
      if (!res.ok) {
        // What the person sent stays in view, but it is no step to go back to: the dialog did not take it.
        for (const li of added) {
          const kept = el("li", li.className.replace(" sim-step", " sim-refused"), li.textContent);
          kept.dataset.step = li.dataset.step;
          li.replaceWith(kept);
        }
        this.refused(res, t("The simulator could not run this step. Try again."));
        return;
      }
      this.steps.push({ update, shown: shown ?? note ?? "", result: res.data });
      this.show(res.data, index);
    } finally {
      this.busy = false;
      this.root.classList.remove("busy");
      this.log.scrollTop = this.log.scrollHeight;
    }
  }

  /** What the person did at a step (a message, a wait, a start): a click goes back to just after it. */
  stepItem(className, shown, index) {
    const li = el("li", `${className} sim-step`, shown);
    li.title = t("Go back to the dialog as it was after this step");
    li.tabIndex = 0;
    li.setAttribute("role", "button");
    const back = () => this.stepBack(Number(li.dataset.step ?? index));
    li.addEventListener("click", back);
    li.addEventListener("keydown", (e) => { if (e.key === "Enter") back(); });
    return li;
  }

  show(result, index) {
    for (const reply of result.replies || []) {
      const bubble = this.bubble(reply);
      bubble.dataset.step = String(index);
      this.log.append(bubble);
    }
    if (result.state === null) this.note(t("The dialog ended."));
    this.facts(result);
  }

  facts(result) {
    this.stateOut.textContent = result.state ?? t("(no dialog)");
    const title = result.state ? this.stateTitle(result.state) : "";
    this.stateTitleOut.textContent = title && title !== result.state ? `«${title}»` : "";
    const fired = result.fired || {};
    // States by the titles the canvas shows (the id stays in the line above).
    const shown = title && title !== result.state ? `«${title}»` : result.state;
    const summary = fired.own ? null : outcomeWords(result.outcome, fired.transition, shown);
    if (summary) {
      // The engine explains itself in English: in another language the outcome is said in the reader's
      // words, and the engine's full sentence stays one hover away.
      this.firedOut.textContent = summary;
      this.firedOut.title = fired.reason || "";
    } else {
      this.firedOut.textContent = fired.transition ? `${fired.transition}: ${fired.reason || ""}` : (fired.reason || t("no transition"));
      this.firedOut.removeAttribute("title");
    }
    this.dataOut.textContent = dataLines(result.data);
    this.markStale(result.live_payloads);
    this.announce(result.state, fired.transition || null);
  }

  /** Buttons the dialog no longer takes (it would answer a press with the fallback) look stale. */
  markStale(live) {
    const taken = new Set(live || []);
    for (const button of this.log.querySelectorAll(".sim-button")) {
      const payload = button.dataset.payload || "";
      const stale = !taken.has(payload) && !taken.has(payload.trim().toLowerCase());
      button.classList.toggle("stale", stale);
      button.title = stale ? t("Stale: the dialog has moved on, a press gets the fallback") : "";
    }
  }

  async stepBack(index) {
    const step = this.steps[index];
    if (!step || this.busy || index === this.steps.length - 1) return;
    this.busy = true;
    try {
      const res = await api("PUT", `${this.url}/${encodeURIComponent(this.session)}`, {
        json: { dialog: step.result.session, now: step.result.now, source: this.sourceValue() } });
      if (!res.ok) {
        this.refused(res, t("Could not go back to that step."));
        return;
      }
      for (const li of [...this.log.children]) {
        if (li.dataset.step !== undefined && Number(li.dataset.step) > index) li.remove();
      }
      this.steps.length = index + 1;
      this.note(t("Back at step {n}: continue from here.", { n: index + 1 }));
      this.facts({ ...step.result, live_payloads: res.data.live_payloads, fired: { transition: null, reason: t("Went back to this step."), own: true } });
    } finally {
      this.busy = false;
    }
  }

  /** Opens the start form on `state` (the canvas selection; the flow's start state when none is selected). */
  async askStart(state) {
    if (this.starter) await this.starter.open(state);
  }

  async startFromBox() {
    const picked = this.starter.read();
    if (!picked) return;
    const { state, data } = picked;
    const title = this.starter.title();
    const error = this.startBox.querySelector("[data-sim-start-error]");
    await this.beforeSend();
    this.restart(t("Simulating from {state}.", { state: title }));
    const res = await api("PUT", `${this.url}/${encodeURIComponent(this.session)}`, {
      json: { dialog: { state, data }, source: this.sourceValue() } });
    if (!res.ok) {
      this.startBox.hidden = false;
      // The service's sentence is English and names ids; what a person can act on is the state and the source.
      error.textContent = res.status === 403 ? t("Trying the flow in the simulator needs the editor role or above.")
        : t("Could not start there: is this state in the draft or version being simulated?");
      return;
    }
    this.start = { state, data };
    this.show({ ...res.data, fired: { transition: null, reason: t("Simulating from {state}.", { state: title }), own: true } }, -1);
  }

  /** A refusal from the server, shown as the simulator's own note (never as a bot message). */
  refused(res, fallback) {
    const li = el("li", "sim-error", "");
    li.setAttribute("role", "alert");
    // The API's sentences are English; a missing role is the one refusal a person meets here in any language.
    const words = res.status === 403 && res.data?.error === "forbidden"
      ? t("Trying the flow in the simulator needs the editor role or above.")
      : (res.data && res.data.message) || fallback;
    li.append(el("span", "", words));
    if (res.expired) {
      const link = el("a", "", t("Log in again"));
      link.href = loginUrl();
      li.append(" ", link);
    }
    this.log.append(li);
    this.log.scrollTop = this.log.scrollHeight;
  }

  /** A bot message's picture and text in its markup, as MAX shows them, inside `li`. */
  shown(li, reply) {
    li.append(...fillMessage(el("div"), reply, { textClass: "sim-text", pictureClass: "sim-picture" }).childNodes);
    return li;
  }

  bubble(reply) {
    const li = this.shown(el("li", "sim-bot"), reply);
    for (const row of reply.buttons || []) {
      const line = el("div", "sim-buttons");
      for (const button of row) {
        const href = button.url !== undefined ? safeUrl(button.url) : null;
        if (button.url !== undefined) {
          const link = el(href ? "a" : "span", "sim-link", button.text ?? "");
          if (href) { link.href = href; link.target = "_blank"; link.rel = "noopener noreferrer"; }
          line.append(link);
          continue;
        }
        const share = SAMPLE_SHARES[button.request];
        if (share) {
          const ask = el("button", "sim-button sim-request", button.text ?? "");
          ask.type = "button";
          ask.title = button.request === "contact" ? t("Shares a sample contact") : t("Shares a sample location");
          const shown = button.request === "contact" ? t("[contact shared]") : t("[location shared]");
          ask.addEventListener("click", () => this.send({ attachment: share }, shown));
          line.append(ask);
          continue;
        }
        const b = el("button", "sim-button", button.text ?? "");
        b.type = "button";
        b.dataset.payload = button.payload ?? "";
        b.addEventListener("click", () => this.send({ payload: button.payload }, `[${button.text}]`));
        line.append(b);
      }
      li.append(line);
    }
    return li;
  }
}

