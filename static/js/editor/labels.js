// Text shown on the canvas for states and transitions (always plain text: Cytoscape labels are not HTML).

export function stateLabel(state) {
  return state.title ? state.title : state.id;
}

function list(values) {
  return (values || []).join(", ");
}

/** The trigger as one short line: `button: yes`, `text: да, yes`, `timeout 30s`, `else`. */
export function triggerLabel(tr) {
  let label;
  switch (tr.on) {
    case "button": label = `button: ${tr.payload ?? ""}`; break;
    case "text": label = tr.pattern ? `text ~ ${tr.pattern}` : `text: ${list(tr.match)}`; break;
    case "attachment": label = tr.kinds && tr.kinds.length ? `attachment: ${list(tr.kinds)}` : "attachment"; break;
    case "event": label = `event: ${tr.name ?? ""}`; break;
    case "timeout": label = `timeout ${tr.after ?? "?"}s`; break;
    default: label = tr.on || "?";
  }
  if (tr.if && tr.if.length) label += " [if]";
  return label.length > 40 ? `${label.slice(0, 39)}…` : label;
}
