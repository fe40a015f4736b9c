// Live validation: the issues panel and the marks on the canvas, kept until a re-validation drops them.
import { api } from "../api.js";
import { nodeKey, edgeKey, selected } from "./graph.js";

export class IssuesPanel {
  constructor(cy, list, summary, validationUrl) {
    this.cy = cy;
    this.list = list;
    this.summary = summary;
    this.url = validationUrl;
    this.issues = [];
    this.marked = new Map();  // element id -> the issue class it carries
    this.seq = 0;
  }

  async refresh() {
    const seq = ++this.seq;
    const res = await api("GET", this.url);
    if (seq !== this.seq || !res.ok || !res.data) return;  // a newer run answers for the newer draft
    this.issues = res.data.issues || [];
    this.render();
    this.mark();
    document.dispatchEvent(new CustomEvent("botflow:issues", { detail: { issues: this.issues } }));
  }

  elementsOf(issue) {
    const keys = [...(issue.states || []).map(nodeKey), ...(issue.transitions || []).map(edgeKey)];
    return this.cy.collection(keys.map((k) => this.cy.getElementById(k)).filter((e) => e.nonempty()));
  }

  /** Mark what the issues name, changing only elements whose mark differs (errors paint over warnings). */
  mark() {
    const wanted = new Map();
    for (const severity of ["warning", "error"]) {
      for (const issue of this.issues.filter((i) => i.severity === severity)) {
        for (const key of [...(issue.states || []).map(nodeKey), ...(issue.transitions || []).map(edgeKey)]) {
          wanted.set(key, `issue-${severity}`);
        }
      }
    }
    this.cy.batch(() => {
      for (const [key, cls] of this.marked) {
        if (wanted.get(key) === cls) continue;
        const ele = this.cy.getElementById(key);
        if (ele.nonempty()) ele.removeClass(cls);
      }
      for (const [key, cls] of wanted) {
        const ele = this.cy.getElementById(key);
        if (ele.nonempty() && !ele.hasClass(cls)) ele.addClass(cls);
      }
    });
    this.marked = wanted;
  }

  /** Re-apply the marks after the canvas changed (new elements have no classes yet). */
  remark() {
    this.mark();
  }

  render() {
    const errors = this.issues.filter((i) => i.severity === "error").length;
    const warnings = this.issues.length - errors;
    this.summary.textContent = this.issues.length
      ? `${errors} error${errors === 1 ? "" : "s"}, ${warnings} warning${warnings === 1 ? "" : "s"}`
      : "No issues";
    this.summary.dataset.errors = String(errors);
    this.list.replaceChildren(...this.issues.map((issue, index) => this.item(issue, index)));
  }

  item(issue, index) {
    const li = document.createElement("li");
    li.className = `issue issue-${issue.severity}`;
    li.dataset.code = issue.code;
    li.tabIndex = 0;
    const code = document.createElement("span");
    code.className = "issue-code";
    code.textContent = issue.code;
    const message = document.createElement("span");
    message.className = "issue-message";
    message.textContent = issue.message;
    li.append(code, message);
    const focus = () => this.focus(index);
    li.addEventListener("click", focus);
    li.addEventListener("keydown", (e) => { if (e.key === "Enter") focus(); });
    return li;
  }

  /** Select and centre what the issue names. */
  focus(index) {
    const eles = this.elementsOf(this.issues[index]);
    if (eles.empty()) return;
    selected(this.cy).unselect();
    eles.select();
    centre(this.cy, eles.union(eles.connectedNodes()));
  }
}

/** Bring `eles` to the middle of the view, zoomed so they fit but never closer than 1.2. */
export function centre(cy, eles) {
  const box = eles.boundingBox();
  const zoom = Math.min(1.2, cy.width() / (box.w + 240), cy.height() / (box.h + 240));
  cy.stop();
  cy.animate({ zoom: Math.max(zoom, cy.minZoom()), center: { eles } }, { duration: 200 });
}
