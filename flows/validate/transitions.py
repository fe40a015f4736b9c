"""Checks on transitions that can never fire: shadowed by an earlier one, or by the evaluation order."""
from __future__ import annotations

from flows.model import COMMANDS, Flow, State, Transition
from flows.templates import value_text
from flows.validate.graph import FlowGraph, states
from flows.validate.issue import Issue, issue, names


def norm(text: str) -> str:
    """Text as `match` lists and commands compare it: trimmed, case-insensitive (as the engine does)."""
    return text.strip().lower()


def check_ambiguous_transition(flow: Flow, graph: FlowGraph) -> list[Issue]:
    """A transition an earlier one from the same state, with no `if`, always takes first.

    Covered: the same button payload or event name; a `match` list inside an earlier one's (and no
    other `pattern`); attachment kinds inside an earlier one's (no kinds = any); a second `else`,
    `input` or `invalid`; and any second `timeout` (a state has at most one). Each issue names the
    earlier transition first. Transitions out of final states never fire and are left to
    `final_has_exit`.
    """
    return [found for found, _ in _shadowed(flow, graph)]


def _shadowed(flow: Flow, graph: FlowGraph) -> list[tuple[Issue, Transition]]:
    """Each ambiguity with the transition that can never fire; computed once per graph."""
    cached = graph.graph.get("shadowed")
    if cached is None:
        cached = []
        for state in states(flow, graph):
            outgoing = flow.outgoing(state.id)
            # Only a transition with the same trigger can shadow another.
            if len(outgoing) > 1 and not state.final and len({tr.on for tr in outgoing}) < len(outgoing):
                cached.extend(_shadowed_in(state, outgoing))
        graph.graph["shadowed"] = cached
    return cached


def dead_transitions(flow: Flow, graph: FlowGraph) -> frozenset[int]:
    """`id()`s of the transitions that can never fire: shadowed, or ruled out by the evaluation order.

    The data-flow analysis ignores them (no data moves along them); reachability keeps them, so a
    mistake in one transition is reported once, on that transition.
    """
    cached = graph.graph.get("dead")
    if cached is None:
        cached = frozenset([id(tr) for _, tr in _shadowed(flow, graph)]
                           + [id(tr) for _, tr, whole in _ruled_out(flow, graph) if whole])
        graph.graph["dead"] = cached
    return cached


def _shadowed_in(state: State, outgoing: tuple[Transition, ...]) -> list[tuple[Issue, Transition]]:
    """The shadowed transitions among one state's transitions, scanned in document order."""
    found: list[tuple[Issue, Transition]] = []
    by_payload: dict[tuple[str, str | None], Transition] = {}
    by_entry: dict[str, list[tuple[Transition, frozenset[str]]]] = {}
    by_pattern: dict[str, Transition] = {}
    attachments: list[Transition] = []
    first: dict[str, Transition] = {}
    for tr in outgoing:
        earlier: Transition | None = None
        what = ""
        if tr.on in ("button", "event"):
            key = (tr.on, tr.payload if tr.on == "button" else tr.name)
            earlier = by_payload.get(key)
            what = f'button presses with payload "{tr.payload}"' if tr.on == "button" else f'"{tr.name}" events'
            if earlier is None and not tr.conditions:
                by_payload[key] = tr
        elif tr.on == "text":
            entries = frozenset(norm(entry) for entry in tr.match)
            earlier = _text_cover(tr, entries, by_entry, by_pattern)
            what = "texts this one matches"
            if not tr.conditions:
                for entry in entries:
                    by_entry.setdefault(entry, []).append((tr, entries))
                if tr.pattern is not None:
                    by_pattern.setdefault(tr.pattern, tr)
        elif tr.on == "attachment":
            earlier = next((e for e in attachments if not e.kinds or (tr.kinds and set(tr.kinds) <= set(e.kinds))),
                           None)
            what = "attachments this one takes"
            if not tr.conditions:
                attachments.append(tr)
        elif tr.on == "timeout":
            earlier = first.get("timeout")
            first.setdefault("timeout", tr)
            if earlier is not None:
                found.append((issue(
                    "ambiguous_transition",
                    f'State "{state.id}" has more than one timeout transition: "{tr.id}" comes after'
                    f' "{earlier.id}", and a state may have only one. Merge them into one transition.',
                    states=[state.id], transitions=[earlier.id, tr.id], state=state.id, transition=tr.id,
                    earlier=earlier.id,
                ), tr))
            continue
        else:  # input, invalid, else: one unconditional transition takes every such update
            earlier = first.get(tr.on)
            what = {"input": "valid inputs", "invalid": "runs of invalid inputs", "else": "leftover messages"}.get(
                tr.on, f"{tr.on} updates")
            if earlier is None and not tr.conditions:
                first[tr.on] = tr
        if earlier is not None:
            found.append((issue(
                "ambiguous_transition",
                f'Transition "{tr.id}" from state "{state.id}" can never fire: the earlier transition'
                f' "{earlier.id}" has no "if" and takes all {what} first. Remove "{tr.id}", move it'
                f' above "{earlier.id}", or give "{earlier.id}" a condition.',
                states=[state.id], transitions=[earlier.id, tr.id], state=state.id, transition=tr.id,
                earlier=earlier.id,
            ), tr))
    return found


def _text_cover(
    tr: Transition, entries: frozenset[str],
    by_entry: dict[str, list[tuple[Transition, frozenset[str]]]], by_pattern: dict[str, Transition],
) -> Transition | None:
    """The first earlier unconditional text transition matching every text `tr` matches, if any."""
    if entries:
        for earlier, covered in by_entry.get(min(entries), ()):
            if entries <= covered and (tr.pattern is None or tr.pattern == earlier.pattern):
                return earlier
        return None
    if tr.pattern is not None:
        return by_pattern.get(tr.pattern)
    return None


def check_unreachable_transition(flow: Flow, graph: FlowGraph) -> list[Issue]:
    """A transition that can never fire because of the evaluation order rather than another transition.

    An `else` in a state with `input` (every message is input there); `input`/`invalid` in a state
    that has no input (or, for `invalid`, no `max_attempts`); a `text` match or `button` payload
    equal to an enabled global command's match (commands win and also match payloads).
    """
    return [found for found, _, _ in _ruled_out(flow, graph)]


def _ruled_out(flow: Flow, graph: FlowGraph) -> list[tuple[Issue, Transition, bool]]:
    """Each such issue, its transition, and whether it never fires at all; computed once per graph."""
    cached: list[tuple[Issue, Transition, bool]] | None = graph.graph.get("ruled_out")
    if cached is not None:
        return cached
    commands = _command_matches(flow)
    ttl = flow.settings.session_ttl
    cached = []
    for state in states(flow, graph):
        if state.final:
            continue
        for tr in flow.outgoing(state.id):
            why, whole = _never_fires(state, tr, commands, ttl) if tr.on in _SUSPECT else ("", False)
            if why:
                cached.append((issue("unreachable_transition", f'Transition "{tr.id}" from state "{state.id}" {why}',
                                     states=[state.id], transitions=[tr.id], state=state.id, transition=tr.id),
                     tr, whole))
    graph.graph["ruled_out"] = cached
    return cached


# Triggers `_never_fires` can say something about; events and attachments can always fire.
_SUSPECT = frozenset({"else", "input", "invalid", "text", "button", "timeout"})


def _command_matches(flow: Flow) -> dict[str, str]:
    found: dict[str, str] = {}
    for name in COMMANDS:
        command = flow.command(name)
        if command is not None:
            for entry in command.match:
                found.setdefault(norm(entry), name)
    return found


def _never_fires(state: State, tr: Transition, commands: dict[str, str], ttl: float) -> tuple[str, bool]:
    """Why `tr` cannot fire (at all, or for some texts) as a sentence, and whether it never fires at all."""
    if tr.on == "timeout" and tr.after is not None and tr.after >= ttl:
        return (f"can never fire: it waits {value_text(tr.after)} s, but an idle dialog expires after"
                f" session_ttl ({value_text(ttl)} s). Make after smaller than session_ttl, or raise"
                " session_ttl."), True
    if tr.on == "else" and state.input is not None:
        return ("can never fire: the state waits for input, so every message is treated as input. Use an"
                ' "input" transition, an "invalid" transition with max_attempts, or remove it.'), True
    if tr.on == "input" and state.input is None:
        return 'can never fire: the state has no "input". Add one to the state, or change the trigger.', True
    if tr.on == "invalid" and (state.input is None or state.input.max_attempts is None):
        return ('can never fire: "invalid" needs the state\'s input to set max_attempts. Set it, or remove'
                " the transition."), True
    if tr.on == "text":
        taken = [entry for entry in tr.match if norm(entry) in commands]
        if taken:
            owners = names(dict.fromkeys(commands[norm(entry)] for entry in taken))
            whole = len(taken) == len(tr.match) and tr.pattern is None
            return (f"{'can never fire' if whole else 'never fires'} for {names(taken)}: the global command"
                    f" {owners} matches {'it' if len(taken) == 1 else 'them'} first. Use other words, or"
                    " change the command's match."), whole
    if tr.on == "button" and tr.payload is not None and norm(tr.payload) in commands:
        return (f'can never fire: its payload "{tr.payload}" is taken by the global command'
                f' "{commands[norm(tr.payload)]}" first (commands also match button payloads). Use another'
                " payload, or change the command's match."), True
    return "", False
