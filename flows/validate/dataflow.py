"""`undefined_variable`: a forward "must be set" data-flow analysis over the flow graph.

For every state reachable from `start` it computes the data keys set on *every* path that gets
there (intersection over incoming edges, iterated to a fixpoint over a worklist), then compares
each read against it. Key sets are Python ints used as bitsets, so the meet is one `&`.

When things are read and set, following "Firing a transition" in the spec:
- a dialog starts at `start` with no data (`start_payload` and event payload keys never count);
- an `input` transition sets its source state's `save_as` before its `if` and `set` are read;
- `if` vars and `set` templates read the data as it was before the `set` (ops `set`/`unset` only
  test presence, so they are not reads);
- a state's `say` (texts and button texts) is read on entering it, after the entering transition's
  `set` and before its actions; a `clear` action then empties the data the state rests with;
- the state's input `error` and the global texts (fallback, command replies, reminder and its
  buttons) are read while the dialog waits in a non-final state.
"""
from __future__ import annotations

import heapq
from collections.abc import Iterable

import networkx as nx

from flows.model import COMMANDS, Flow, State, Transition
from flows.validate.graph import build_graph, start_known, states
from flows.validate.issue import Issue, issue, names
from flows.templates import compile_template

_PRESENCE_OPS = ("set", "unset")

Edge = tuple[str, int, bool, Transition]  # target, keys set (bitset), clears data, transition


def placeholders(text: str) -> tuple[str, ...]:
    """The keys a template reads, as the renderer parses it (`{{`/`}}` are literal braces)."""
    compiled = compile_template(text)
    return () if isinstance(compiled, str) else compiled[1::2]


class _Keys:
    """Data keys interned as bits."""

    def __init__(self) -> None:
        self.bits: dict[str, int] = {}

    def mask(self, keys: Iterable[str]) -> int:
        """The bitset of `keys`."""
        mask = 0
        for key in keys:
            bit = self.bits.get(key)
            if bit is None:
                bit = self.bits[key] = 1 << len(self.bits)
            mask |= bit
        return mask


def check_undefined_variable(flow: Flow, graph: nx.MultiDiGraph) -> list[Issue]:
    """A template or condition reads a key that some path from `start` reaches without setting it."""
    if not start_known(flow):
        return []  # no paths from start exist to reason about; no_start/unknown_state say so
    keys = _Keys()
    ever_set = _ever_set(flow)
    keys.mask(sorted(ever_set))
    succ = _edges(flow, graph, keys)
    resting = _fixpoint(flow, graph, succ)
    entering = _entering(flow, succ, resting)
    reader = _Reader(flow, graph, keys, ever_set, resting)
    found: list[Issue] = []
    waiting: list[str] = []
    for state in states(flow):
        if state.id not in resting:
            continue  # unreachable: reported as such, and no path reads anything there
        found.extend(reader.say(state, entering[state.id]))
        if state.final:
            continue
        waiting.append(state.id)
        found.extend(reader.error(state))
        for tr in flow.outgoing(state.id):
            found.extend(reader.transition(state, tr))
    found.extend(reader.global_texts(waiting))
    return found


def available_keys(flow: Flow, graph: nx.MultiDiGraph | None = None) -> dict[str, frozenset[str]]:
    """Keys surely set while a dialog rests in each state reachable from `start` (empty without a start)."""
    if not start_known(flow):
        return {}
    graph = build_graph(flow) if graph is None else graph
    keys = _Keys()
    resting = _fixpoint(flow, graph, _edges(flow, graph, keys))
    by_bit = {bit.bit_length() - 1: key for key, bit in keys.bits.items()}
    return {state: frozenset(by_bit[i] for i in range(have.bit_length()) if have >> i & 1)
            for state, have in resting.items()}


def _ever_set(flow: Flow) -> set[str]:
    found = {state.input.save_as for state in flow.states if state.input and state.input.save_as}
    found.update(key for tr in flow.transitions for key, _ in tr.set)
    return found


def _input_key(state: State | None) -> str | None:
    return state.input.save_as if state is not None and state.input is not None else None


def _gen(flow: Flow, tr: Transition, keys: _Keys) -> int:
    """The keys firing `tr` sets: the source's `save_as` for `input`, then its `set` keys."""
    saved = _input_key(flow.state(tr.source)) if tr.on == "input" else None
    return keys.mask(([saved] if saved else []) + [key for key, _ in tr.set])


def _clears(tr: Transition) -> bool:
    return any(action.type == "clear" for action in tr.actions)


def _edges(flow: Flow, graph: nx.MultiDiGraph, keys: _Keys) -> dict[str, list[Edge]]:
    succ: dict[str, list[Edge]] = {}
    for source, target, tr in graph.edges(data="transition"):
        succ.setdefault(source, []).append((target, _gen(flow, tr, keys), _clears(tr), tr))
    return succ


def _fixpoint(flow: Flow, graph: nx.MultiDiGraph, succ: dict[str, list[Edge]]) -> dict[str, int]:
    """Keys surely set while resting in each reachable state (after the entering actions).

    Sets only shrink from "unknown" (absent), so the worklist terminates; popping in reverse
    postorder visits predecessors first and settles acyclic parts in one pass.
    """
    order = {node: i for i, node in enumerate(reversed(list(nx.dfs_postorder_nodes(graph, flow.start))))}
    resting = {flow.start: 0}
    heap = [(0, flow.start)]
    queued = {flow.start}
    while heap:
        _, node = heapq.heappop(heap)
        queued.discard(node)
        have = resting[node]
        for target, gen, clear, _ in succ.get(node, ()):
            out = 0 if clear else have | gen
            old = resting.get(target)
            new = out if old is None else old & out
            if new != old:
                resting[target] = new
                if target not in queued:
                    queued.add(target)
                    heapq.heappush(heap, (order[target], target))
    return resting


def _entering(flow: Flow, succ: dict[str, list[Edge]], resting: dict[str, int]) -> dict[str, int]:
    """Keys surely set when a state's `say` is rendered: after `set`, before `clear`."""
    entering = {flow.start: 0}  # a new dialog enters start with no data
    for source, edges in succ.items():
        have = resting.get(source)
        if have is None:
            continue
        for target, gen, _, _ in edges:
            after = have | gen
            old = entering.get(target)
            entering[target] = after if old is None else old & after
    return entering


class _Reader:
    """Turns reads of keys that may be unset into issues."""

    def __init__(self, flow: Flow, graph: nx.MultiDiGraph, keys: _Keys, ever_set: set[str],
                 resting: dict[str, int]) -> None:
        self.flow, self.graph, self.keys, self.ever_set, self.resting = flow, graph, keys, ever_set, resting

    def _missing(self, read: Iterable[str], have: int) -> list[str]:
        read = tuple(dict.fromkeys(read))
        if not read or not self.keys.mask(read) & ~have:
            return []
        return [key for key in read if self.keys.mask((key,)) & ~have]

    def _never(self, key: str) -> str:
        return f'nothing in the flow sets "{key}" (no save_as or set names it). Correct the name, or collect the value first.'

    def _culprits(self, state: State, key: str, *, before_clear: bool) -> list[str]:
        """Transitions from reachable states that enter `state` without `key` set."""
        bit = self.keys.mask((key,))
        culprits = []
        for source, _, tr in self.graph.in_edges(state.id, data="transition"):
            have = self.resting.get(source)
            if have is None:
                continue
            after = 0 if _clears(tr) and not before_clear else have | _gen(self.flow, tr, self.keys)
            if not after & bit:
                culprits.append(tr.id)
        return culprits

    def _ways_in(self, state: State, culprits: list[str]) -> str:
        """The ways into `state` that arrive without a key, as a clause."""
        parts = ["a new dialog starts there with no data"] if state.id == self.flow.start else []
        if culprits:
            parts.append(f'{"transition" if len(culprits) == 1 else "transitions"} {names(dict.fromkeys(culprits))}'
                         " can lead there without it")
        return "; ".join(parts)

    def _unset_in(self, state: State, key: str, *, before_clear: bool, moment: str) -> tuple[str, list[str]]:
        """Why `key` may be unset at `moment` in `state`, and the transitions to blame."""
        if key not in self.ever_set:
            return self._never(key), []
        culprits = self._culprits(state, key, before_clear=before_clear)
        return (f"it may be unset {moment} ({self._ways_in(state, culprits)}). Set it on every way into the"
                " state, or remove the placeholder."), culprits

    def say(self, state: State, have: int) -> list[Issue]:
        """Placeholders in the state's messages and button texts, read on entering it."""
        read = [key for message in state.say
                for text in (message.text, *(b.text for row in message.buttons for b in row))
                for key in placeholders(text)]
        found = []
        for key in self._missing(read, have):
            why, culprits = self._unset_in(state, key, before_clear=True, moment="when the state is entered")
            found.append(issue("undefined_variable", f'State "{state.id}" shows {{{key}}}, but {why}',
                               states=[state.id], transitions=culprits))
        return found

    def error(self, state: State) -> list[Issue]:
        """Placeholders in the input error text, read while waiting in the state."""
        if state.input is None or not state.input.error:
            return []
        found = []
        for key in self._missing(placeholders(state.input.error), self.resting[state.id]):
            why, culprits = self._unset_in(state, key, before_clear=False, moment="while the dialog waits there")
            found.append(issue("undefined_variable",
                               f'The input error text of state "{state.id}" reads {{{key}}}, but {why}',
                               states=[state.id], transitions=culprits))
        return found

    def transition(self, state: State, tr: Transition) -> list[Issue]:
        """`if` vars and `set` templates, read after an `input` trigger saved its value."""
        have = self.resting[state.id]
        if tr.on == "input":
            have |= self.keys.mask(filter(None, [_input_key(state)]))
        read = [c.var for c in tr.conditions if c.op not in _PRESENCE_OPS]
        read += [key for _, template in tr.set for key in placeholders(template)]
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
                               states=[state.id], transitions=[tr.id]))
        return found

    def global_texts(self, waiting: list[str]) -> list[Issue]:
        """Fallback, command replies and the reminder: read in every waiting state."""
        found: list[Issue] = []
        if not waiting:
            return found
        for label, text in _global_texts(self.flow):
            for key in placeholders(text):
                if key not in self.ever_set:
                    found.append(issue("undefined_variable", f"{label} reads {{{key}}}, but {self._never(key)}"))
                    continue
                bit = self.keys.mask((key,))
                unset = [state_id for state_id in waiting if not self.resting[state_id] & bit]
                if unset:
                    found.append(issue(
                        "undefined_variable",
                        f'{label} reads {{{key}}}, but "{key}" may be unset while the dialog waits in'
                        f' {"state" if len(unset) == 1 else "states"} {names(unset)}. Remove the placeholder,'
                        " or set the key before those states.",
                        states=unset,
                    ))
        return found


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
