// The funnel painted on the editor's graph: edge width by fires, state heat by the share that stopped there
// (entered against went on and ended), a figure badge under
// each state, the full figures on hover. With a second version, the diff's colours mark what changed from
// the older version (A) to the newer (B) and each badge and edge shows both sides' rates.
import { t, lang } from "../i18n.js";
import { nodeKey, edgeKey } from "./graph.js";
import { addStyles } from "./style.js";

const HEAT = ["#ffffff", "#fee2e2", "#fecaca", "#fca5a5", "#f87171"];  // drawn only without a comparison
const STYLES = [
  ...HEAT.slice(1).map((colour, i) => [`node.fn-heat-${i + 1}`, { "background-color": colour }]),
  ["node.fn-leak", { "border-color": "#dc2626", "border-width": 4 }],
  ["edge.fn-on", { width: "data(fnW)", label: "data(fnL)", "font-size": 12, color: "#0f172a", "text-background-color": "#ffffff",
                   "text-background-opacity": 0.9, "text-background-padding": 2, "text-rotation": "none" }],
  ["edge.fn-plain", { "line-color": "#2563eb", "target-arrow-color": "#2563eb" }],
  ["edge.fn-idle", { "line-color": "#cbd5e1", "target-arrow-color": "#cbd5e1", "line-style": "dotted" }],
];
const CLASSES = "fn-heat-1 fn-heat-2 fn-heat-3 fn-heat-4 fn-leak fn-on fn-plain fn-idle diff-added diff-removed diff-changed";
// A change of conversion this large (in points of a percentage) is marked as changed.
export const CHANGED = 0.05;
// A state where this share of the dialogs that entered it ended there by cancel or expiry is marked as leaking.
const LEAK = 0.3;

const pct = (share) => (share === null ? "—" : `${Math.round(share * 100)}%`);
const num = (n) => Number(n || 0).toLocaleString(lang);
// The change of a rate in points, shown after the two rates when it is not nothing: " (+8)", " (−12)".
const points = (a, b) => {
  if (a === null || b === null) return "";
  const d = Math.round(b * 100) - Math.round(a * 100);
  return d === 0 ? "" : ` (${d > 0 ? "+" : "−"}${Math.abs(d)})`;
};

/** How long, as a person reads it: 45 s, 3 min, 2 h. */
export function duration(seconds) {
  if (seconds === null || seconds === undefined) return "—";
  if (seconds < 60) return t("{n} s", { n: Math.round(seconds) });
  if (seconds < 3600) return t("{n} min", { n: Math.round(seconds / 60) });
  return t("{n} h", { n: Math.round(seconds / 360) / 10 });
}

/** Index a funnel answer: states and transitions by id, with each state's share that went on. */
export function indexed(report) {
  const states = new Map(report.states.map((s) => [s.id, s]));
  const transitions = new Map(report.transitions.map((tr) => [tr.id, tr]));
  const onward = (s) => {
    if (!s || !s.entered) return null;
    const left = Object.values(s.left).reduce((a, b) => a + b, 0);
    return Math.min(1, (left + s.ended.completed) / s.entered);
  };
  const rate = (tr) => {
    const source = tr && states.get(tr.source);
    return source && source.entered ? Math.min(1, tr.fired / source.entered) : null;
  };
  return { version: report.version, states, transitions, onward, rate };
}

// Heat: the share of the dialogs that entered a state and did not go on from it (they stopped there, were
// cancelled or expired), from white (under 5%) to the hottest (60% or more).
const HEAT_FROM = [0.05, 0.2, 0.4, 0.6];

function heat(onward) {
  if (onward === null) return 0;
  return HEAT_FROM.filter((share) => 1 - onward >= share).length;
}

function diffClass(inA, inB, a, b) {
  if (inB && !inA) return "diff-added";
  if (inA && !inB) return "diff-removed";
  if (a !== null && b !== null && Math.abs(b - a) >= CHANGED) return "diff-changed";
  return "";
}

/** Paint one funnel (`b`), or the comparison of `a` (older) with `b`; returns the badge texts by state id. */
export function paint(cy, b, a = null) {
  addStyles(cy, STYLES);
  const badges = new Map();
  cy.batch(() => {
    cy.elements().removeClass(CLASSES);
    const mostFired = Math.max(1, ...[...b.transitions.values()].map((tr) => tr.fired));
    cy.nodes().forEach((node) => {
      const sid = node.data("sid");
      const sb = b.states.get(sid);
      const entered = sb ? sb.entered : 0;
      const level = heat(b.onward(sb));
      if (level && !a) node.addClass(`fn-heat-${level}`);  // compared, the diff's colours fill the states
      if (sb && entered && (sb.ended.cancel + sb.ended.expired) / entered >= LEAK) node.addClass("fn-leak");
      if (!a) {
        badges.set(sid, entered ? t("{entered} in · {onward} on", { entered: num(entered), onward: pct(b.onward(sb)) }) : t("none"));
        return;
      }
      const sa = a.states.get(sid);
      const change = diffClass(sa && sa.known, sb && sb.known, a.onward(sa), b.onward(sb));
      if (change) node.addClass(change);
      badges.set(sid, `v${a.version} ${num(sa ? sa.entered : 0)} · ${pct(a.onward(sa))} → v${b.version} ${num(entered)} · ${pct(b.onward(sb))}${points(a.onward(sa), b.onward(sb))}`);
    });
    cy.edges().forEach((edge) => {
      const tid = edge.data("tid");
      const tb = b.transitions.get(tid);
      const fired = tb ? tb.fired : 0;
      edge.data("fnW", 1.5 + 10 * Math.sqrt(fired / mostFired));
      edge.addClass("fn-on");
      if (!a) {
        edge.addClass(fired ? "fn-plain" : "fn-idle");
        edge.data("fnL", fired ? `${num(fired)} · ${pct(b.rate(tb))}` : "0");
        return;
      }
      const ta = a.transitions.get(tid);
      const change = diffClass(Boolean(ta && ta.source), Boolean(tb && tb.source), a.rate(ta), b.rate(tb));
      edge.addClass(change || (fired ? "fn-plain" : "fn-idle"));
      edge.data("fnL", `${pct(a.rate(ta))} → ${pct(b.rate(tb))}`);
    });
  });
  return badges;
}

/** Take the funnel off the graph. */
export function unpaint(cy) {
  cy.batch(() => cy.elements().removeClass(CLASSES));
}

/** The figures of one state or transition on each side, as lines for the hover box. */
export function details(kind, id, sides) {
  const lines = [];
  for (const side of sides) {
    const head = sides.length > 1 ? t("Version {n}", { n: side.version }) : "";
    if (kind === "state") {
      const s = side.states.get(id);
      if (!s) { lines.push([head, t("not in this version")]); continue; }
      const left = Object.entries(s.left).map(([tr, n]) => t("left by {transition}: {n}", { transition: tr, n: num(n) }));
      lines.push([head, t("entered: {n}", { n: num(s.entered) }), ...left,
        t("cancelled here: {n}", { n: num(s.ended.cancel) }), t("expired here: {n}", { n: num(s.ended.expired) }),
        t("completed here: {n}", { n: num(s.ended.completed) }),
        ...(s.ended.restart ? [t("restarted here: {n}", { n: num(s.ended.restart) })] : []),
        ...(s.ended.back ? [t("went back from here: {n}", { n: num(s.ended.back) })] : []),
        t("went on: {share}", { share: pct(side.onward(s)) }),
        t("median time here: {time}", { time: duration(s.median_seconds) })]);
    } else {
      const tr = side.transitions.get(id);
      if (!tr || !tr.source) { lines.push([head, t("not in this version")]); continue; }
      lines.push([head, t("fired: {n}", { n: num(tr.fired) }),
        t("{share} of the dialogs that entered {state}", { share: pct(side.rate(tr)), state: tr.source })]);
    }
  }
  return lines;
}

export { nodeKey, edgeKey };
