// The simulator: a chat with the draft (or a frozen version) through the simulate API, on the same
// engine as live traffic, in a sandbox. Announces the current state and the fired transition.
import { api, loginUrl } from "./api.js";
import { t } from "./i18n.js";

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function safeUrl(url) {
  return typeof url === "string" && /^https?:\/\//i.test(url) ? url : null;
}

export class Simulator {
  constructor(root, { flowId, beforeSend = () => Promise.resolve() }) {
    this.root = root;
    this.url = `/api/flows/${encodeURIComponent(flowId)}/simulate`;
    this.versionsUrl = `/api/flows/${encodeURIComponent(flowId)}/versions`;
    this.beforeSend = beforeSend;
    this.log = root.querySelector("[data-sim-log]");
    this.form = root.querySelector("[data-sim-form]");
    this.input = root.querySelector("[data-sim-input]");
    this.source = root.querySelector("[data-sim-source]");
    this.stateOut = root.querySelector("[data-sim-state]");
    this.firedOut = root.querySelector("[data-sim-fired]");
    this.dataOut = root.querySelector("[data-sim-data]");
    this.busy = false;
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
      chip.addEventListener("click", () => this.send({ text: chip.dataset.simSay }, chip.dataset.simSay));
    }
    const idle = this.root.querySelector("[data-sim-idle]");
    if (idle) {
      idle.addEventListener("click", () => {
        const seconds = Number(this.root.querySelector("[data-sim-idle-seconds]").value || 0);
        if (seconds > 0) this.send({ idle: seconds }, null, t("⏱ {seconds} s later", { seconds }));
      });
    }
    const started = this.root.querySelector("[data-sim-started]");
    if (started) started.addEventListener("click", () => this.send({ bot_started: null }, null, t("▶ bot started")));
    this.source.addEventListener("change", () => this.restart());
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

  restart() {
    this.session = `sim-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
    this.log.replaceChildren(el("li", "sim-system", t("New conversation. Type a message to start.")));
    this.stateOut.textContent = "—";
    this.firedOut.textContent = "—";
    this.dataOut.textContent = "{}";
    this.announce(null, null);
  }

  announce(state, transition) {
    document.dispatchEvent(new CustomEvent("botflow:sim", { detail: { state, transition } }));
  }

  async send(update, shown, note) {
    if (this.busy) return;
    this.busy = true;
    this.root.classList.add("busy");
    if (shown !== null && shown !== undefined) this.log.append(el("li", "sim-user", shown));
    if (note) this.log.append(el("li", "sim-system", note));
    try {
      await this.beforeSend();
      const source = this.source.value === "draft" ? "draft" : Number(this.source.value);
      const res = await api("POST", this.url, { json: { session: this.session, update, source } });
      if (!res.ok) {
        this.log.append(this.notice(res));
        return;
      }
      this.show(res.data);
    } finally {
      this.busy = false;
      this.root.classList.remove("busy");
      this.log.scrollTop = this.log.scrollHeight;
    }
  }

  show(result) {
    for (const reply of result.replies || []) this.log.append(this.bubble(reply));
    if (result.state === null) this.log.append(el("li", "sim-system", t("The dialog ended.")));
    this.stateOut.textContent = result.state ?? t("(no dialog)");
    const fired = result.fired || {};
    this.firedOut.textContent = fired.transition ? `${fired.transition}: ${fired.reason || ""}` : (fired.reason || t("no transition"));
    this.dataOut.textContent = JSON.stringify(result.data || {}, null, 2);
    this.announce(result.state, fired.transition || null);
  }

  /** A refusal from the server, shown as the simulator's own note (never as a bot message). */
  notice(res) {
    const li = el("li", "sim-error", "");
    li.setAttribute("role", "alert");
    li.append(el("span", "", (res.data && res.data.message) || t("The simulator could not run this step. Try again.")));
    if (res.expired) {
      const link = el("a", "", t("Log in again"));
      link.href = loginUrl();
      li.append(" ", link);
    }
    return li;
  }

  bubble(reply) {
    const li = el("li", "sim-bot");
    li.append(el("div", "sim-text", reply.text ?? ""));
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
        const b = el("button", "sim-button", button.text ?? "");
        b.type = "button";
        b.addEventListener("click", () => this.send({ payload: button.payload }, `[${button.text}]`));
        line.append(b);
      }
      li.append(line);
    }
    return li;
  }
}
