// The Tests tab: saved dialog tests of the flow (run all, results side by side, delete), "save as test"
// from a simulator conversation, generated tests with the transitions none covers, coverage on the
// canvas, and a replay of a bot's recorded dialogs against the draft or a version.
import { api, revisionOf } from "../api.js";
import { t } from "../i18n.js";
import { showCoverage } from "./coverage.js";
import { dataLines } from "../simulator.js";

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function json(value) {
  return JSON.stringify(value, null, 1);
}

/** A checked value as a reader says it: one reply per line, buttons as [a] [b] per message, the ended
 * dialog in words, data as key: value; anything else as JSON. */
export function shown(key, value) {
  if (key === "state") return value === null ? t("(the dialog ended)") : String(value);
  if (key === "replies" && Array.isArray(value)) {
    return value.length ? value.map((text) => `«${text}»`).join("\n") : t("(no reply)");
  }
  if (key === "buttons" && Array.isArray(value)) {
    if (!value.some((rows) => Array.isArray(rows) && rows.length)) return t("(no buttons)");
    return value.map((rows) => (Array.isArray(rows) && rows.length
      ? rows.map((row) => (Array.isArray(row) ? row.map((b) => `[${b}]`).join(" ") : json(row))).join(" / ")
      : "—")).join("\n");
  }
  if (key === "data" && value && typeof value === "object" && !Array.isArray(value)) return dataLines(value);
  return json(value);
}

/** An update as a reader says it; a press by its button's text when the run knew it. */
function describeUpdate(update, buttonText) {
  if ("idle" in update) return t("wait {seconds} s", { seconds: update.idle });
  if ("event" in update) return t("event {name}", { name: update.event });
  if ("attachment" in update) return `[${update.attachment.type}]${update.text ? ` ${update.text}` : ""}`;
  if ("payload" in update) return buttonText ? t("button “{text}”", { text: buttonText }) : `[${update.payload}]`;
  if ("bot_started" in update) return t("bot started");
  return update.text ?? "";
}

/** A coverage point as a reader names it: titles of states, button texts, the command as typed. */
export function pointWords(point) {
  const state = point.state_title || point.state;
  const to = point.target_title || point.target;
  switch (point.kind) {
    case "attempts": return t("Too many invalid answers in “{state}” → “{to}”", { state, to });
    case "timeout": return t("Timeout in “{state}” → “{to}”", { state, to });
    case "invalid": return t("Invalid input in “{state}”", { state });
    case "button": return t("Button “{text}” in “{state}”", { text: point.text, state });
    case "reminder": return t("The reminder");
    case "command": return t("Command {match}", { match: point.match });
    default: return t("Transition “{state}” → “{to}”", { state, to });
  }
}

/** The points no test touched, in words; the id a point has is shown on hover. */
export function missingList(points) {
  const ul = el("ul", "uncovered");
  for (const point of points.missing) {
    const li = el("li");
    li.dataset.point = point.key;
    const words = el("span", "point-words", pointWords(point));
    words.title = point.transition || point.state || point.command || "";
    li.append(words);
    if (point.reason) li.append(el("span", "hint", ` — ${point.reason}`));
    ul.append(li);
  }
  return ul;
}

const KEY_NAMES = { replies: () => t("Replies"), buttons: () => t("Buttons"), state: () => t("State"), data: () => t("Data") };

/** Expected beside actual for each part of a step that differs. */
export function sideBySide(failure) {
  const table = el("table", "side-by-side");
  const head = el("tr");
  head.append(el("th", "", ""), el("th", "", t("Expected")), el("th", "", t("Actual")));
  table.append(head);
  for (const key of failure.differs) {
    const row = el("tr");
    row.append(el("th", "", (KEY_NAMES[key] || (() => key))()));
    row.append(el("td", "expected", shown(key, failure.expected[key])));
    row.append(el("td", "actual", shown(key, failure.actual[key])));
    table.append(row);
  }
  return table;
}

export class TestsPanel {
  constructor(root, { flowId, cy, simulator, source }) {
    this.root = root;
    this.cy = cy;
    this.simulator = simulator;
    this.source = source;
    this.base = `/api/flows/${encodeURIComponent(flowId)}`;
    this.flowId = flowId;
    this.canEdit = root.dataset.canEdit !== "no";
    this.tests = [];
    this.revision = "t0";
    this.results = new Map();
    this.coverage = null;
    this.list = root.querySelector("[data-tests-list]");
    this.status = root.querySelector("[data-tests-status]");
    this.figure = root.querySelector("[data-tests-coverage]");
    this.missing = root.querySelector("[data-tests-missing]");
    this.onGraph = root.querySelector("[data-tests-on-graph]");
    this.generated = root.querySelector("[data-tests-generated]");
    this.saveForm = root.querySelector("[data-tests-save]");
    this.replayBox = root.querySelector("[data-tests-replay]");
    root.querySelector("[data-tests-run]").addEventListener("click", () => this.runAll());
    root.querySelector("[data-tests-generate]").addEventListener("click", () => this.generate());
    this.onGraph.addEventListener("change", () => showCoverage(this.cy, this.onGraph.checked ? this.coverage : null));
    this.saveForm.addEventListener("submit", (e) => { e.preventDefault(); this.saveConversation(); });
    this.saveForm.querySelector("[data-tests-save-cancel]").addEventListener("click", () => { this.saveForm.hidden = true; });
    if (simulator) simulator.addEventListener("save-test", (e) => this.openSave(e.detail));
    this.replayBox.addEventListener("submit", (e) => { e.preventDefault(); this.replay(); });
    this.load();
    this.loadBots();
  }

  sourceValue() {
    return this.source.value === "draft" ? "draft" : Number(this.source.value);
  }

  say(text, kind = "") {
    this.status.textContent = text;
    this.status.dataset.kind = kind;
  }

  async load() {
    const res = await api("GET", `${this.base}/tests`);
    if (!res.ok) {
      this.say((res.data && res.data.message) || t("The saved tests could not be loaded."), "error");
      return;
    }
    this.tests = res.data.tests;
    this.revision = res.data.revision || revisionOf(res.headers.get("ETag")) || "t0";
    this.render();
  }

  /** Change the saved list on the server (one test added or removed), then show it as saved. */
  async mutate(method, url, json) {
    const res = await api(method, url, { json, headers: { "If-Match": `"${this.revision}"` } });
    if (res.status === 412) {
      await this.load();
      this.say(t("Someone else changed the tests meanwhile; the list was reloaded, try again."), "error");
      return { ok: false, res };
    }
    if (!res.ok) return { ok: false, res };
    await this.load();
    return { ok: true, res };
  }

  add(test) {
    return this.mutate("POST", `${this.base}/tests`, { test });
  }

  render() {
    const items = this.tests.map((test) => this.item(test));
    if (!items.length) items.push(el("li", "empty", t("No saved tests yet: save a simulator conversation or generate some.")));
    this.list.replaceChildren(...items);
    const count = (this.root.closest("aside") || document).querySelector("[data-tests-count]");
    if (count) count.textContent = String(this.tests.length);
  }

  item(test) {
    const li = el("li", "test-item");
    li.dataset.test = test.name;
    const line = el("div", "test-line");
    const result = this.results.get(test.name);
    const badge = el("span", `tag ${result ? (result.passed ? "ok" : "failed") : "muted"}`,
      result ? (result.passed ? t("passed") : t("failed")) : t("not run"));
    line.append(badge, el("span", "test-name", test.name),
      el("span", "hint", t("{n} steps", { n: test.steps.length })));
    li.append(line);
    if (result && !result.passed) li.append(this.failure(result, test.name));
    if (!this.canEdit) return li;
    const remove = el("button", "link-button", "×");
    remove.type = "button";
    remove.title = t("Delete this test");
    remove.setAttribute("aria-label", t("Delete the test {name}", { name: test.name }));
    remove.addEventListener("click", async () => {
      const { ok, res } = await this.mutate("DELETE", `${this.base}/tests/${encodeURIComponent(test.name)}`);
      if (!ok && res.status !== 412) this.say((res.data && res.data.message) || t("Not deleted."), "error");
    });
    line.append(remove);
    return li;
  }

  failure(result, name) {
    const box = el("div", "test-failure");
    if (result.error) {
      box.append(el("p", "field-error", result.error));
      return box;
    }
    const f = result.failure;
    box.append(el("p", "", t("Step {n} ({update}) differs:", { n: f.step + 1, update: describeUpdate(f.update, f.button) })));
    box.append(sideBySide(f));
    if (this.canEdit) {
      const accept = el("button", "", t("Accept the new answer"));
      accept.type = "button";
      accept.dataset.testsAccept = "";
      accept.title = t("The bot's answer is right now: save it as what this step expects, then run the tests again");
      accept.addEventListener("click", () => this.accept(name, f, accept));
      const actions = el("div", "row-actions");
      actions.append(accept);
      box.append(actions);
    }
    return box;
  }

  /** Save what the step did as what it expects (the differing parts only), then run everything again,
   * so a later step that differs too shows up next. */
  async accept(name, failure, button) {
    const tests = structuredClone(this.tests);
    const test = tests.find((one) => one.name === name);
    if (!test || !test.steps[failure.step]) {
      await this.load();
      this.say(t("This test changed meanwhile; run the tests again first."), "error");
      return;
    }
    const expect = test.steps[failure.step].expect;
    for (const key of failure.differs) {
      expect[key] = key === "data" ? { ...(expect.data || {}), ...failure.actual.data } : failure.actual[key];
    }
    button.disabled = true;
    this.say(t("Saving the new answer of “{name}”…", { name }), "busy");
    const { ok, res } = await this.mutate("PUT", `${this.base}/tests`, { tests });
    if (ok) {
      await this.runAll();
    } else if (res.status !== 412) {  // a 412 reloaded the list and said so already
      button.disabled = false;
      this.say((res.data && res.data.message) || t("The new answer was not saved."), "error");
    }
  }

  showCoverageFigure(coverage) {
    this.coverage = coverage;
    const covered = coverage.covered.length;
    this.figure.replaceChildren(
      el("strong", "coverage-figure", `${coverage.percent}%`),
      el("span", "", t(" of transitions covered ({covered} of {total})", { covered, total: coverage.total })));
    this.figure.hidden = false;
    const points = coverage.points;
    if (points) {
      const head = el("p", "", t("{percent}% of the flow covered ({covered} of {total}: transitions, invalid input, the reminder, timeouts, commands, buttons).",
        { percent: points.percent, covered: points.covered, total: points.total }));
      this.missing.replaceChildren(head);
      if (points.missing.length) this.missing.append(el("p", "hint", t("Not covered:")), missingList(points));
      this.missing.hidden = false;
    }
    this.onGraph.closest("label").hidden = false;
    this.onGraph.checked = true;
    showCoverage(this.cy, coverage);
  }

  async runAll() {
    this.say(t("Running {n} tests…", { n: this.tests.length }), "busy");
    const res = await api("POST", `${this.base}/tests/run`, { json: { source: this.sourceValue() } });
    if (!res.ok) {
      this.say((res.data && res.data.message) || t("The tests could not run."), "error");
      return;
    }
    this.results = new Map(res.data.results.map((r) => [r.name, r]));
    this.render();
    const where = res.data.source === "draft" ? t("the draft") : t("version {n}", { n: res.data.source });
    this.say(t("{passed} passed, {failed} failed on {where}.", { passed: res.data.passed, failed: res.data.failed, where }),
      res.data.failed ? "error" : "ok");
    this.showCoverageFigure(res.data.coverage);
  }

  async generate() {
    this.say(t("Searching the graph for dialogs that fire every transition…"), "busy");
    const res = await api("POST", `${this.base}/tests/generate`, { json: { source: this.sourceValue() } });
    if (!res.ok) {
      this.say((res.data && res.data.message) || t("No tests could be generated."), "error");
      return;
    }
    const data = res.data;
    const box = this.generated;
    box.replaceChildren();
    box.append(el("p", "", t("{n} dialogs fire {covered} of {total} transitions.",
      { n: data.tests.length, covered: data.coverage.covered.length, total: data.coverage.total })));
    const names = new Set(this.tests.map((x) => x.name));
    const fresh = data.tests.filter((x) => !names.has(x.name));
    const add = el("button", "primary", t("Add {n} tests", { n: fresh.length }));
    add.type = "button";
    add.disabled = !fresh.length;
    add.hidden = !this.canEdit;
    add.addEventListener("click", async () => {
      // The server generates again and appends: a large flow's tests need not be sent back from here.
      const answer = await api("POST", `${this.base}/tests/generated`,
        { json: { source: this.sourceValue() }, headers: { "If-Match": `"${this.revision}"` } });
      if (!answer.ok) {
        if (answer.status === 412) await this.load();
        this.say((answer.data && answer.data.message) || t("Not saved."), "error");
        return;
      }
      box.hidden = true;
      await this.load();
      this.say(t("{n} generated tests saved.", { n: answer.data.added }), "ok");
    });
    box.append(add);
    box.hidden = false;
    this.say("", "");
    this.showCoverageFigure({ ...data.coverage, uncovered: data.uncovered });
  }

  // ---- save a simulator conversation as a test ----
  openSave({ steps, start }) {
    this.pending = { steps, start };
    this.root.dispatchEvent(new CustomEvent("tests:show", { bubbles: true }));
    const rows = this.saveForm.querySelector("[data-tests-save-steps]");
    rows.replaceChildren();
    let before = start ? { ...start.data } : {};
    steps.forEach((step, i) => {
      const data = step.result.data || {};
      const changed = Object.keys(data).filter((k) => JSON.stringify(before[k]) !== JSON.stringify(data[k]));
      before = data;
      const row = el("fieldset", "save-step");
      row.dataset.index = String(i);
      row.append(el("legend", "", `${i + 1}. ${step.shown || describeUpdate(step.update)}`));
      const hasButtons = (step.result.replies || []).some((r) => (r.buttons || []).length);
      for (const key of ["replies", "buttons", "state"]) {
        row.append(this.check(`expect-${key}`, KEY_NAMES[key](), key !== "buttons" || hasButtons, key));
      }
      for (const key of Object.keys(data)) {
        row.append(this.check("expect-data", `${t("Data")}: ${key}`, changed.includes(key), key));
      }
      rows.append(row);
    });
    this.saveForm.querySelector("[data-tests-save-error]").textContent = "";
    const name = this.saveForm.querySelector("[data-tests-save-name]");
    name.value = t("Test {n}", { n: this.tests.length + 1 });
    this.saveForm.hidden = false;
    name.focus();
    name.select();
  }

  check(kind, label, checked, value) {
    const wrap = el("label", "check");
    const box = el("input");
    box.type = "checkbox";
    box.checked = checked;
    box.dataset.kind = kind;
    box.value = value;
    wrap.append(box, document.createTextNode(` ${label}`));
    return wrap;
  }

  conversationCase(name) {
    const steps = this.pending.steps.map((step, i) => {
      const row = this.saveForm.querySelector(`fieldset[data-index="${i}"]`);
      const on = (kind) => row.querySelector(`input[data-kind="expect-${kind}"]`).checked;
      const replies = step.result.replies || [];
      const expect = {};
      if (on("replies")) expect.replies = replies.map((r) => r.text);
      if (on("buttons")) expect.buttons = replies.map((r) => (r.buttons || []).map((line) => line.map((b) => b.text)));
      if (on("state")) expect.state = step.result.state;
      const keys = [...row.querySelectorAll('input[data-kind="expect-data"]:checked')].map((b) => b.value);
      if (keys.length) expect.data = Object.fromEntries(keys.map((k) => [k, step.result.data[k]]));
      return { update: step.update, expect };
    });
    const test = { name, steps };
    if (this.pending.start) test.start = this.pending.start;
    return test;
  }

  async saveConversation() {
    const name = this.saveForm.querySelector("[data-tests-save-name]").value.trim();
    const error = this.saveForm.querySelector("[data-tests-save-error]");
    if (!name) { error.textContent = t("Give the test a name."); return; }
    if (this.tests.some((x) => x.name === name)) { error.textContent = t("Another test already has this name."); return; }
    const { ok, res } = await this.add(this.conversationCase(name));
    if (!ok) {
      if (res.status !== 412) error.textContent = (res.data && res.data.message) || t("Not saved.");
      return;
    }
    this.saveForm.hidden = true;
    this.say(t("Saved the test {name}.", { name }), "ok");
  }

  // ---- replay of recorded dialogs ----
  async loadBots() {
    const res = await api("GET", "/api/bots");
    const select = this.replayBox.querySelector("[data-replay-bot]");
    const bots = res.ok && Array.isArray(res.data) ? res.data.filter((b) => b.flow === this.flowId) : [];
    if (!bots.length) { this.replayBox.hidden = true; return; }
    select.replaceChildren(...bots.map((b) => { const o = el("option", "", b.title || b.id); o.value = b.id; return o; }));
    this.replayBox.hidden = false;
  }

  async replay() {
    const bot = this.replayBox.querySelector("[data-replay-bot]").value;
    const last = Number(this.replayBox.querySelector("[data-replay-last]").value || 100);
    const out = this.replayBox.querySelector("[data-replay-result]");
    out.replaceChildren(el("p", "hint", t("Replaying the recorded dialogs…")));
    const res = await api("POST", `/api/bots/${encodeURIComponent(bot)}/replay`,
      { json: { source: this.sourceValue(), flow: this.flowId, last } });
    if (!res.ok) {
      out.replaceChildren(el("p", "field-error", (res.data && res.data.message) || t("The replay did not run.")));
      return;
    }
    const data = res.data;
    const items = [el("p", "", t("{differ} of {dialogs} dialogs would now go differently.", data))];
    for (const group of data.groups) {
      items.push(el("p", "replay-group", t("{count} part at {state}: {expected} then, {actual} now", {
        count: group.count, state: group.state || t("the start"), expected: group.expected_transition || "—",
        actual: group.actual_transition || "—" })));
    }
    for (const found of data.differing.slice(0, 20)) {
      const box = el("div", "test-failure");
      const d = found.divergence;
      box.append(el("p", "", t("User {user}, step {n} ({update}):", { user: found.user, n: d.step + 1, update: describeUpdate(d.update, d.button) })));
      box.append(sideBySide(d));
      const keep = el("button", "", t("Save as test"));
      keep.type = "button";
      keep.hidden = !this.canEdit;
      keep.addEventListener("click", async () => {
        if (this.tests.some((x) => x.name === found.test.name)) { keep.disabled = true; return; }
        const { ok } = await this.add(found.test);
        if (ok) { keep.disabled = true; keep.textContent = t("Saved"); }
      });
      box.append(keep);
      items.push(box);
    }
    out.replaceChildren(...items);
  }
}

/** The Simulator / Tests tabs of the right column; a panel asks for its tab with a "tests:show" event. */
export function installTabs(aside) {
  const buttons = [...aside.querySelectorAll("[data-tab-show]")];
  const show = (name) => {
    for (const b of buttons) b.setAttribute("aria-selected", String(b.dataset.tabShow === name));
    for (const part of aside.querySelectorAll("[data-tab]")) part.hidden = part.dataset.tab !== name;
  };
  for (const b of buttons) b.addEventListener("click", () => show(b.dataset.tabShow));
  aside.addEventListener("tests:show", () => show("tests"));
  show("sim");
}
