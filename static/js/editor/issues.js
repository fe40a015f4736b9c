// Live validation: the issues panel and the marks on the canvas, kept until a re-validation drops them.
import { nodeKey, edgeKey, selected } from "./graph.js";

export class IssuesPanel {
  /**
   * `pane` is #issues-pane; the server draws it (grouped lines in the person's language) and sends it on
   * request (`url`) or inside a side-panel form's answer, out of band. The marks come from its data.
   */
  constructor(cy, url) {
    this.cy = cy;
    this.url = url;
    this.issues = [];
    this.marked = new Map();  // element id -> the issue class it carries
    this.seq = 0;
    // The pane last read (at first the page's empty one); a new one means a form's answer brought issues.
    this.pane = document.getElementById("issues-pane");
    for (const type of ["htmx:oobAfterSwap", "htmx:afterSettle", "htmx:afterRequest"]) {
      document.body.addEventListener(type, () => this.check());
    }
  }

  /** Adopt a pane a form's answer swapped in (out of band); an older refresh in flight must not win. */
  check() {
    const pane = document.getElementById("issues-pane");
    if (!pane || pane === this.pane) return;
    this.seq += 1;
    this.adopt();
  }

  async refresh() {
    const seq = ++this.seq;
    let html = null;
    try {
      const res = await fetch(this.url, { headers: { "HX-Request": "true" }, credentials: "same-origin" });
      if (res.ok) html = await res.text();
    } catch { /* the save status already says when the server cannot be reached */ }
    this.check();  // a form's answer that arrived meanwhile is newer than this run
    if (seq !== this.seq || html === null) return;  // a newer run answers for the newer draft
    const pane = document.getElementById("issues-pane");
    const fresh = new DOMParser().parseFromString(html, "text/html").getElementById("issues-pane");
    if (!pane || !fresh) return;
    pane.replaceWith(document.importNode(fresh, true));
    this.adopt();
  }

  /** Read the pane the server drew: keep its issues, mark the canvas, make its lines select. */
  adopt() {
    const pane = document.getElementById("issues-pane");
    if (!pane) return;
    this.pane = pane;
    try { this.issues = JSON.parse(pane.dataset.issues || "[]"); } catch { this.issues = []; }
    this.lines = [...pane.querySelectorAll("#issues-list .issue")];
    for (const li of this.lines) {
      const focus = () => this.focusLine(li);
      li.addEventListener("click", focus);
      li.addEventListener("keydown", (e) => { if (e.key === "Enter") focus(); });
    }
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

  focusLine(li) {
    const read = (name) => { try { return JSON.parse(li.dataset[name] || "[]"); } catch { return []; } };
    this.focusIssue({ states: read("states"), transitions: read("transitions") });
  }

  /** Select and centre what the issue at `index` of the API's list names. */
  focus(index) {
    this.focusIssue(this.issues[index]);
  }

  focusIssue(issue) {
    const eles = this.elementsOf(issue);
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
