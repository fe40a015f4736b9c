// Text shown on the canvas for states and transitions (always plain text: Cytoscape labels are not HTML).
import { t } from "../i18n.js";

// Zoomed out, the canvas draws the title large and wrapped: a long one would run far past its box.
const LABEL_CHARS = 32;

export function stateLabel(state) {
  const text = state.title ? state.title : state.id;
  return text.length > LABEL_CHARS ? `${text.slice(0, LABEL_CHARS - 1).trimEnd()}…` : text;
}

function list(values) {
  return (values || []).join(", ");
}

/** The trigger as one short line: `button: yes`, `text: да, yes`, `timeout 30s`, `else` (in the page's language). */
export function triggerLabel(tr) {
  let label;
  switch (tr.on) {
    case "button": label = t("button: {payload}", { payload: tr.payload ?? "" }); break;
    case "text":
      label = tr.pattern ? t("text ~ {pattern}", { pattern: tr.pattern }) : t("text: {texts}", { texts: list(tr.match) });
      break;
    case "attachment":
      label = tr.kinds && tr.kinds.length ? t("attachment: {kinds}", { kinds: list(tr.kinds) }) : t("attachment");
      break;
    case "event": label = t("event: {name}", { name: tr.name ?? "" }); break;
    case "timeout": label = t("timeout {seconds}s", { seconds: tr.after ?? "?" }); break;
    case "input": label = t("input"); break;
    case "invalid": label = t("invalid"); break;
    case "else": label = t("else"); break;
    default: label = tr.on || "?";
  }
  return shortened(label, tr);
}

/**
 * A press of a button the card shows: the edge leaves from that button's row, which already says what the
 * user taps, so the edge says only what the row cannot (a condition). Parallel presses to one state
 * otherwise stacked their labels into one unreadable line.
 */
export function pressLabel(tr) {
  return shortened("", tr).trim();
}

function shortened(label, tr) {
  if (tr.if && tr.if.length) label += t(" [if]");
  return label.length > 40 ? `${label.slice(0, 39)}…` : label;
}
