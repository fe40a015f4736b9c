"""`undefined_variable`: a forward "must be set" data-flow analysis over the flow graph.

For every state reachable from `start` it computes the data keys set on *every* path that gets
there (intersection over incoming edges, iterated to a fixpoint over a worklist), then compares
each read against it. Key sets are Python ints used as bitsets, so the meet is one `&`; only keys
something reads get a bit, and a flow that reads nothing needs no analysis at all.

When things are read and set, following "Firing a transition" in the spec:
- a dialog starts at `start` with no data (`start_payload` and event payload keys never count);
- an `input` transition sets its source state's `save_as` before its `if` and `set` are read;
- `if` vars and `set` templates read the data as it was before the `set` (ops `set`/`unset` only
  test presence, so they are not reads);
- a state's `say` (texts and button texts) is read on entering it, after the entering transition's
  `set` and before its actions; a `clear` action then empties the data the state rests with;
- the state's input `error` and the global texts (fallback, command replies, reminder and its
  buttons) are read while the dialog waits in a non-final state;
- a transition that can never fire (`dead_transitions`) neither reads nor carries data.
"""
from __future__ import annotations

import heapq
from functools import cached_property

from flows.build import localized
from flows.format import PLACEHOLDER
from flows.model import COMMANDS, Flow, State, Transition
from flows.validate.graph import FlowGraph, build_graph, start_known, states
from flows.validate.issue import Issue, issue, names
from flows.validate.transitions import dead_transitions

_PRESENCE_OPS = ("set", "unset")
_ENTERED = "when the state is entered"
_WAITING = "while the dialog waits there"


# The renderer's grammar (flows.templates): `{{`/`}}` are literal braces and are consumed first.


def placeholders(text: str) -> list[str]:
    """The keys a template reads, in order (`{{name}}` reads nothing)."""
    return [key for key in PLACEHOLDER.findall(text) if key] if "{" in text else []


def check_undefined_variable(flow: Flow, graph: FlowGraph) -> list[Issue]:
    """A template or condition reads a key that some path from `start` reaches without setting it; the
    texts of every language are read (a translation may insert a key its source does not)."""
    found = _undefined(flow, graph)
    if len(flow.languages) > 1:
        seen = set(found)
        for code in flow.languages[1:]:
            other = localized(flow, code)  # the graph holds the states, texts and all: one of its own
            for issue in _undefined(other, build_graph(other)):
                if issue not in seen:
                    seen.add(issue)
                    found.append(issue)
    return found


def _undefined(flow: Flow, graph: FlowGraph) -> list[Issue]:
    if not start_known(flow):
        return []  # no paths from start exist to reason about; no_start/unknown_state say so
    reads = _Reads(flow, graph)
    if not reads.bits:
        return []
    facts = _Analysis(flow, graph, reads.bits)
    found: list[Issue] = []
    waiting: list[str] = []
    for state in states(flow, graph):
        have = facts.resting.get(state.id)
        if have is None:
            continue  # unreachable: reported as such, and no path reads anything there
        site = reads.say.get(state.id)
        if site and site[1] & facts.entering[state.id] != site[1]:
            found.extend(facts.report(state, site[0], facts.entering[state.id], _ENTERED,
                                      f'State "{state.id}" shows'))
        if state.final:
            continue
        waiting.append(state.id)
        site = reads.error.get(state.id)
        if site and site[1] & have != site[1]:
            found.extend(facts.report(state, site[0], have, _WAITING,
                                      f'The input error text of state "{state.id}" reads'))
        for tr, read, mask in reads.transitions.get(state.id, ()):
            if mask & have != mask:
                found.extend(facts.report_transition(state, tr, read))
    for label, read, _ in reads.global_texts:
        found.extend(facts.report_global(label, read, waiting))
    return found


def available_keys(flow: Flow, graph: FlowGraph | None = None) -> dict[str, frozenset[str]]:
    """Keys surely set while a dialog rests in each state reachable from `start` (empty without a start)."""
    if not start_known(flow):
        return {}
    facts = _Analysis(flow, build_graph(flow) if graph is None else graph, None)
    return {state: frozenset(facts.keys_of(have)) for state, have in facts.resting.items()}


class _Reads:
    """Every place a template or condition reads data keys, with the keys' bits.

    Keys get bits in the order they are first read, so the sets early states hold stay small.
    """

    def __init__(self, flow: Flow, graph: FlowGraph) -> None:
        self.bits: dict[str, int] = {}
        self.say: dict[str, tuple[tuple[str, ...], int]] = {}
        self.error: dict[str, tuple[tuple[str, ...], int]] = {}
        self.transitions: dict[str, list[tuple[Transition, tuple[str, ...], int]]] = {}
        self._parsed: dict[str, list[str]] = {}  # texts repeat (error texts, button labels)
        keys_in = self._keys_in
        dead = dead_transitions(flow, graph)  # never evaluated, so they read nothing
        for state in states(flow, graph):
            read: list[str] = []
            for message in state.say:
                if "{" in message.text:
                    read.extend(keys_in(message.text))
                for row in message.buttons:
                    for button in row:
                        if "{" in button.text:
                            read.extend(keys_in(button.text))
            if read:
                self.say[state.id] = self._site(read)
            if state.final:
                continue
            if state.input is not None and state.input.error and "{" in state.input.error:
                read = keys_in(state.input.error)
                if read:
                    self.error[state.id] = self._site(read)
            for tr in flow.outgoing(state.id):
                if not tr.conditions and not tr.set or dead and id(tr) in dead:
                    continue
                read = [c.var for c in tr.conditions if c.op not in _PRESENCE_OPS]
                for _, template in tr.set:
                    if "{" in template:
                        read.extend(keys_in(template))
                if read:
                    self.transitions.setdefault(state.id, []).append((tr, *self._site(read)))
        self.global_texts = [(label, *self._site(read)) for label, text in _global_texts(flow)
                             if (read := placeholders(text))]

    def _keys_in(self, text: str) -> list[str]:
        """`placeholders(text)`, parsed once per distinct text."""
        found = self._parsed.get(text)
        if found is None:
            found = self._parsed[text] = placeholders(text)
        return found

    def _site(self, read: list[str]) -> tuple[tuple[str, ...], int]:
        """The keys read at one place, each once, and their bitset."""
        keys = tuple(dict.fromkeys(read)) if len(read) > 1 else tuple(read)
        bits, mask = self.bits, 0
        for key in keys:
            bit = bits.get(key)
            if bit is None:
                bit = bits[key] = 1 << len(bits)
            mask |= bit
        return keys, mask


def _global_texts(flow: Flow) -> list[tuple[str, str]]:
    texts = [("The fallback text", flow.settings.fallback)]
    for name in COMMANDS:
        command = flow.command(name)
        if command is not None and command.reply:
            texts.append((f'The reply of the "{name}" command', command.reply))
    reminder = flow.settings.reminder
    if reminder is not None:
        texts.append(("The reminder", reminder.text))
        texts.extend(("A reminder button", button.text) for row in reminder.buttons for button in row)
    return texts


class _Analysis:
    """Key sets as int bitsets, each edge's effect, the fixpoint over them, and the issues it implies."""

    def __init__(self, flow: Flow, graph: FlowGraph, bits: dict[str, int] | None) -> None:
        self.flow, self.graph = flow, graph
        # Only keys something reads need a bit; None tracks every key that is ever set.
        self.bits = bits if bits is not None else {key: 1 << i for i, key in enumerate(sorted(self.ever_set))}
        self.saves = {state.id: self.bits[state.input.save_as] for state in states(flow, graph)
                      if state.input is not None and state.input.save_as in self.bits}
        self.dead = dead_transitions(flow, graph)  # no data moves along a transition that never fires
        self.succ: dict[str, list[tuple[str, int, bool]]] = {}
        dead, effect = self.dead, self.effect
        for source, targets in graph.adjacency():
            edges = []
            for target, parallel in targets.items():
                for data in parallel.values():
                    tr = data["transition"]
                    if dead and id(tr) in dead:
                        continue
                    # Most transitions neither set nor clear anything: skip working that out.
                    edges.append((target, *effect(source, tr)) if tr.set or tr.actions or tr.on == "input"
                                 else (target, 0, False))
            if edges:
                self.succ[source] = edges
        self.entering: dict[str, int] = {}
        self.resting = self._fixpoint()

    @cached_property
    def ever_set(self) -> set[str]:
        """Keys some `save_as` or `set` names (only needed to word an issue)."""
        found = {state.input.save_as for state in self.flow.states if state.input and state.input.save_as}
        found.update(key for tr in self.flow.transitions for key, _ in tr.set)
        return found

    def effect(self, source: str, tr: Transition) -> tuple[int, bool]:
        """The keys firing `tr` sets (the source's save_as for `input`, then `set`), and whether it clears."""
        gen = 0
        bits = self.bits
        for key, _ in tr.set:
            gen |= bits.get(key, 0)
        if tr.on == "input":
            gen |= self.saves.get(source, 0)
        return gen, any(action.type == "clear" for action in tr.actions) if tr.actions else False

    def keys_of(self, mask: int) -> list[str]:
        """The keys in a bitset."""
        return [key for key, bit in self.bits.items() if mask & bit]

    def _fixpoint(self) -> dict[str, int]:
        """Keys surely set while resting in each reachable state (after the entering actions).

        Sets only shrink from "unknown" (absent), so the worklist terminates; popping in reverse
        postorder visits predecessors first and settles acyclic parts in one pass. Alongside, it
        fills `entering`: the keys surely set when a state's `say` is rendered (after `set`, before
        `clear`). Every edge is last processed with its source's final set, and earlier passes only
        saw supersets of it, so the running intersection ends exact.
        """
        start, succ = self.flow.start, self.succ
        nodes = _reverse_postorder(start, succ)
        order = {node: i for i, node in enumerate(nodes)}
        resting = {start: 0}
        entering = self.entering
        entering[start] = 0  # a new dialog enters start with no data
        heap = [0]  # positions in reverse postorder
        queued = {start}
        while heap:
            node = nodes[heapq.heappop(heap)]
            queued.discard(node)
            have = resting[node]
            for target, gen, clear in succ.get(node, ()):
                after = have | gen
                seen = entering.get(target)
                entering[target] = after if seen is None else seen & after
                out = 0 if clear else after
                old = resting.get(target)
                new = out if old is None else old & out
                if new != old:
                    resting[target] = new
                    if target not in queued:
                        queued.add(target)
                        heapq.heappush(heap, order[target])
        return resting

    def _missing(self, read: tuple[str, ...], have: int) -> list[str]:
        bits = self.bits
        return [key for key in read if not have & bits[key]]

    def _never(self, key: str) -> str:
        return (f'nothing in the flow sets "{key}" (no save_as or set names it). Correct the name, or collect'
                " the value first.")

    def _culprits(self, state_id: str, key: str, *, before_clear: bool) -> list[str]:
        """Transitions from reachable states that enter `state_id` without `key` set, in document order."""
        bit = self.bits[key]
        found = []
        tr: Transition
        for source, _, index, tr in self.graph.in_edges(state_id, keys=True, data="transition"):
            have = self.resting.get(source)
            if have is None or id(tr) in self.dead:
                continue
            gen, clear = self.effect(source, tr)
            if not (0 if clear and not before_clear else have | gen) & bit:
                found.append(index)
        return [self.flow.transitions[index].id for index in sorted(found)]

    def report(self, state: State, read: tuple[str, ...], have: int, moment: str, subject: str) -> list[Issue]:
        """Issues for the state's own texts (`say` on entering, input error while waiting)."""
        found = []
        for key in self._missing(read, have):
            culprits: list[str] = []
            if key not in self.ever_set:
                why = self._never(key)
            else:
                culprits = self._culprits(state.id, key, before_clear=moment == _ENTERED)
                ways = ["a new dialog starts there with no data"] if state.id == self.flow.start else []
                if culprits:
                    ways.append(f'{"transition" if len(culprits) == 1 else "transitions"} {names(culprits)}'
                                " can lead there without it")
                why = (f"it may be unset {moment} ({'; '.join(ways)}). Set it on every way into the state, or"
                       " remove the placeholder.")
            found.append(issue("undefined_variable", f"{subject} {{{key}}}, but {why}",
                               states=[state.id], transitions=culprits, key=key))
        return found

    def report_transition(self, state: State, tr: Transition, read: tuple[str, ...]) -> list[Issue]:
        """Issues for `if` vars and `set` templates, read after an `input` trigger saved its value."""
        have = self.resting[state.id]
        saved = _input_key(state)
        if tr.on == "input" and saved in self.bits:
            have |= self.bits[saved]
        found = []
        for key in self._missing(read, have):
            if key not in self.ever_set:
                why = self._never(key)
            else:
                hint = " (event payload keys are never counted as set)" if tr.on == "event" else ""
                why = (f'it may be unset in state "{state.id}"{hint}. Set it on every way into "{state.id}",'
                       ' or test it with "op": "set" first.')
            found.append(issue("undefined_variable",
                               f'Transition "{tr.id}" from state "{state.id}" reads "{key}" in its if/set, but {why}',
                               states=[state.id], transitions=[tr.id], key=key))
        return found

    def report_global(self, label: str, read: tuple[str, ...], waiting: list[str]) -> list[Issue]:
        """Issues for a global text (fallback, command reply, reminder), read in every waiting state."""
        found: list[Issue] = []
        if not waiting:
            return found
        resting = self.resting
        for key in read:
            if key not in self.ever_set:
                found.append(issue("undefined_variable", f"{label} reads {{{key}}}, but {self._never(key)}",
                                   states=waiting, key=key))
                continue
            bit = self.bits[key]
            unset = [state_id for state_id in waiting if not resting[state_id] & bit]
            if unset:
                found.append(issue(
                    "undefined_variable",
                    f'{label} reads {{{key}}}, but "{key}" may be unset while the dialog waits in'
                    f' {"state" if len(unset) == 1 else "states"} {names(unset)}. Remove the placeholder,'
                    " or set the key before those states.",
                    states=unset, key=key,
                ))
        return found


def _reverse_postorder(start: str, succ: dict[str, list[tuple[str, int, bool]]]) -> list[str]:
    """States reachable from `start`, each after all its predecessors except along back edges."""
    done: list[str] = []
    seen = {start}
    stack = [(start, iter(succ.get(start, ())))]
    while stack:
        node, edges = stack[-1]
        for target, _, _ in edges:
            if target not in seen:
                seen.add(target)
                stack.append((target, iter(succ.get(target, ()))))
                break
        else:
            stack.pop()
            done.append(node)
    done.reverse()
    return done


def _input_key(state: State | None) -> str | None:
    return state.input.save_as if state is not None and state.input is not None else None
