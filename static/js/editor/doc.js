// Edits of a flow document (`botflow/v1`) made on the canvas. Each returns a new document; none mutates.

export function clone(doc) {
  return structuredClone(doc);
}

/** Fill in transition ids the way the loader does (`from__to`, then `_2`, `_3`...), so issues match. */
export function withTransitionIds(doc) {
  const transitions = doc.transitions || [];
  if (transitions.every((t) => t.id)) return doc;
  const next = clone(doc);
  const taken = new Set(next.transitions.filter((t) => t.id).map((t) => t.id));
  next.transitions = next.transitions.map((t) => {
    if (t.id) return t;
    const base = `${t.from}__${t.to}`;
    let id = base;
    for (let n = 2; taken.has(id); n += 1) id = `${base}_${n}`;
    taken.add(id);
    return { id, ...t };
  });
  return next;
}

function unique(base, taken) {
  let id = base.slice(0, 64);
  for (let n = 2; taken.has(id); n += 1) id = `${base.slice(0, 60)}_${n}`;
  return id;
}

function stateIds(doc) {
  return new Set((doc.states || []).map((s) => s.id));
}

function transitionIds(doc) {
  return new Set((doc.transitions || []).map((t) => t.id));
}

export function stateOf(doc, id) {
  return (doc.states || []).find((s) => s.id === id);
}

/** A new empty state at `position`; the first state of a flow becomes its start. */
export function addState(doc, position) {
  const next = clone(doc);
  next.states = next.states || [];
  const id = unique(`state_${next.states.length + 1}`, stateIds(next));
  next.states.push({ id, title: "", say: [{ text: "" }] });
  next.layout = { ...(next.layout || {}), [id]: round(position) };
  if (!next.start) next.start = id;
  return { doc: next, id };
}

/** Drop states, every transition touching them and their positions. */
export function deleteStates(doc, ids) {
  const gone = new Set(ids);
  if (!gone.size) return doc;
  const next = clone(doc);
  next.states = next.states.filter((s) => !gone.has(s.id));
  next.transitions = (next.transitions || []).filter((t) => !gone.has(t.from) && !gone.has(t.to));
  for (const id of gone) if (next.layout) delete next.layout[id];
  if (gone.has(next.start)) next.start = "";
  return next;
}

export function deleteTransitions(doc, ids) {
  const gone = new Set(ids);
  if (!gone.size) return doc;
  const next = clone(doc);
  next.transitions = next.transitions.filter((t) => !gone.has(t.id));
  return next;
}

/**
 * A new transition `from` → `to` firing on `trigger` (`{on: "button", payload}`, `{on: "input"}`...); without
 * one, the trigger `defaultTrigger` picks.
 */
export function addTransition(doc, from, to, trigger = null) {
  const next = { ...doc, transitions: [...(doc.transitions || [])] };
  const on = trigger ? trigger : defaultTrigger(doc, stateOf(doc, from));
  const base = on.on === "button" ? `${from}_${on.payload}`.replace(/[^a-z0-9_]+/gi, "_").toLowerCase()
    : from === to ? `${from}_again` : `${from}_to_${to}`;
  const id = unique(base, transitionIds(doc));
  next.transitions.push({ id, from, to, ...on });
  return { doc: next, id };
}

/**
 * The trigger of an arrow drawn from `source` without one: `input` out of a waiting state (otherwise
 * `else`) while no transition takes it; then a button of the state no transition takes yet; then `invalid`
 * when the input counts attempts. A second unconditional `input` or `else` could never fire, so the new
 * arrow would start as an error the editor has to undo.
 */
export function defaultTrigger(doc, source) {
  const first = source && source.input ? "input" : "else";
  if (!source) return { on: first };
  const out = (doc.transitions || []).filter((t) => t.from === source.id);
  const taken = (on) => out.some((t) => t.on === on && !(t.if && t.if.length));
  if (!taken(first)) return { on: first };
  const free = payloadsOf(source).find((p) => !out.some((t) => t.on === "button" && String(t.payload) === p));
  if (free !== undefined) return { on: "button", payload: free };
  if (source.input && source.input.max_attempts && !taken("invalid")) return { on: "invalid" };
  return { on: first };
}

/** The payloads of a state's own callback buttons, in the order they are shown. */
export function payloadsOf(state) {
  const out = [];
  for (const message of (state && state.say) || []) {
    for (const row of message.buttons || []) for (const b of row || []) if (b.payload !== undefined && !out.includes(String(b.payload))) out.push(String(b.payload));
  }
  return out;
}

export function setTitle(doc, id, title) {
  const next = { ...doc, states: doc.states.map((s) => (s.id === id ? { ...s, title } : s)) };
  return next;
}

/** Positions of moved states, rounded so the saved document stays readable. */
export function setPositions(doc, positions) {
  const layout = { ...(doc.layout || {}) };
  for (const [id, pos] of Object.entries(positions)) layout[id] = round(pos);
  return { ...doc, layout };
}

/** States and the transitions among them, ready to paste. */
export function copyStates(doc, ids) {
  const chosen = new Set(ids);
  return {
    states: clone((doc.states || []).filter((s) => chosen.has(s.id))),
    transitions: clone((doc.transitions || []).filter((t) => chosen.has(t.from) && chosen.has(t.to))),
    layout: Object.fromEntries([...chosen].filter((id) => doc.layout && doc.layout[id]).map((id) => [id, doc.layout[id]])),
  };
}

/** Paste copied states under fresh ids, shifted by `offset`; returns the new state ids. */
export function pasteStates(doc, clip, offset) {
  const next = clone(doc);
  next.states = next.states || [];
  next.transitions = next.transitions || [];
  next.layout = next.layout || {};
  const taken = stateIds(next);
  const rename = {};
  for (const state of clip.states) {
    const id = unique(`${state.id.slice(0, 58)}_copy`, taken);
    taken.add(id);
    rename[state.id] = id;
    next.states.push({ ...clone(state), id });
    const pos = clip.layout[state.id] || { x: 0, y: 0 };
    next.layout[id] = round({ x: pos.x + offset.x, y: pos.y + offset.y });
  }
  const tids = transitionIds(next);
  for (const tr of clip.transitions) {
    const id = unique(`${tr.id.slice(0, 58)}_copy`, tids);
    tids.add(id);
    next.transitions.push({ ...clone(tr), id, from: rename[tr.from], to: rename[tr.to] });
  }
  if (!next.start && next.states.length) next.start = next.states[0].id;
  return { doc: next, ids: Object.values(rename) };
}

function round(pos) {
  return { x: Math.round(pos.x), y: Math.round(pos.y) };
}
