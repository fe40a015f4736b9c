"""Generated tests: a search over the dialog graph, with the engine as the oracle, for dialogs that
together fire every transition; the ones no dialog fires are named with the reason."""
from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass
from typing import Any

from flows.conditions import check, describe
from flows.firing import FlowPlan, plan
from flows.model import Condition, Flow, Transition
from flows.session import Session
from flows.testing.cases import Case, Step
from flows.testing.examples import attachment, condition_values, invalid_input, pattern_example, valid_inputs
from flows.testing.runner import CLOCK_START, advance, observe, opening, run_case
from flows.testing.updates import parse_update

MAX_NODES = 4000
# Generated dialogs longer than twice this are kept as pieces (see `segments`): shared beginnings then
# appear once instead of in every dialog, which keeps the tests of a large flow small enough to save.
SEGMENT = 10
# Dialogs at one state that differ only in data the conditions read: a few are kept, so an `if` further
# on can still see different values, without the combinations of every earlier answer multiplying.
MAX_VARIANTS = 4
OTHER_TEXT = "something else entirely"


@dataclass(slots=True)
class Node:
    """A dialog the search reached: its session, clock and the updates that led there."""

    session: Session | None
    now: float
    path: tuple[dict[str, Any], ...]
    fired: tuple[str, ...]
    # (index into path, {"state", "data"}) where the dialog had just entered a state afresh, about
    # SEGMENT steps apart: where a long dialog may be cut (see `segments`).
    cuts: tuple[tuple[int, dict[str, Any]], ...] = ()


def _fresh(s: Session, now: float) -> bool:
    """The dialog just entered its state: a dialog started there with the same data behaves the same."""
    return (s.attempts == 0 and not s.reminded and not s.timeout_held and s.entered_at == now
            and s.updated_at == now)


def _wanted(conds: list[Condition], var: str) -> list[Any]:
    return condition_values([c for c in conds if c.var == var])


def _event_payloads(tr: Transition) -> list[dict[str, Any]]:
    """Payloads for an event: empty, and one whose values make the transition's `if` hold where possible."""
    payload: dict[str, Any] = {}
    for var in dict.fromkeys(c.var for c in tr.conditions):
        conds = [c for c in tr.conditions if c.var == var]
        if all(c.op in ("unset", "ne", "not_in") for c in conds):
            continue
        for value in condition_values(conds) + ["yes", 1]:
            if all(check(c, {var: value}) for c in conds):
                payload[var] = value
                break
    return [payload, {}] if payload else [{}]


class Search:
    """Breadth-first over dialogs; each move is a short list of update objects."""

    def __init__(self, flow: Flow, max_nodes: int = MAX_NODES) -> None:
        self.flow = flow
        self.fp: FlowPlan = plan(flow)
        self.max_nodes = max_nodes
        self.relevant = sorted({c.var for tr in flow.transitions for c in tr.conditions})
        self.first: dict[str, Node] = {}  # transition id -> the first node whose last move fired it
        self.why: dict[str, str] = {}
        self.reached: set[str] = set()
        self.expanded = 0
        self.exhausted = True

    def key(self, node: Node) -> Any:
        s = node.session
        if s is None:
            return None
        data = json.dumps([s.data.get(k) for k in self.relevant], sort_keys=True, default=str)
        sp = self.fp.states.get(s.state)
        limit = sp.input.max_attempts if sp is not None and sp.input is not None else None
        # Invalid attempts matter only up to max_attempts; counting further would make every dialog new.
        attempts = min(s.attempts, limit) if limit else 0
        return (s.state, attempts, s.reminded, s.timeout_held), data

    def opening_moves(self) -> list[list[dict[str, Any]]]:
        restart = self.flow.command("restart")
        if restart is not None and restart.match:
            return [[{"text": restart.match[0]}]]
        return [[{"bot_started": None}]]

    def moves(self, s: Session) -> list[list[dict[str, Any]]]:
        sp = self.fp.states.get(s.state)
        if sp is None:
            return []
        out: list[list[dict[str, Any]]] = []
        for on, tr, _, _ in sp.matchers:
            if on == "button":
                out.append([{"payload": tr.payload}])
            elif on == "text":
                text = tr.match[0] if tr.match else pattern_example(tr.pattern)
                if text is None:
                    self.why.setdefault(tr.id, f"no text was found that its pattern {tr.pattern!r} matches")
                else:
                    out.append([{"text": text}])
            elif on == "attachment":
                out.append([attachment(tr.kinds[0] if tr.kinds else None)])
            elif on == "event":
                out += [[{"event": tr.name, "payload": p}] for p in _event_payloads(tr)]
        inp = sp.input
        if inp is not None:
            conds = [c for tr in sp.on_input for c in tr.conditions]
            good, why = valid_inputs(inp, _wanted(conds, inp.save_as) if inp.save_as else [])
            out += [[u] for u in good]
            if why:
                for tr in sp.on_input:
                    self.why.setdefault(tr.id, why)
            bad = invalid_input(inp)
            if bad is not None:
                out.append([bad])
                if sp.on_invalid and inp.max_attempts:
                    out.append([bad] * max(1, inp.max_attempts - s.attempts))
            else:
                for tr in sp.on_invalid:
                    self.why.setdefault(tr.id, f"every message is valid input of type {inp.type}, so no input "
                                               "is ever invalid")
        elif sp.on_else:
            out.append([{"text": OTHER_TEXT}])
        if sp.timeout is not None:
            out.append([{"idle": float(sp.timeout.after or 0)}])
        reminder = self.flow.settings.reminder
        if reminder is not None and not s.reminded and sp.timeout is None:
            out.append([{"idle": float(reminder.after)}])
        return out

    def play(self, node: Node, move: list[dict[str, Any]]) -> Node:
        session, now, fired, cuts = node.session, node.now, list(node.fired), node.cuts
        at = len(node.path)
        for raw in move:
            update, idle = parse_update(raw)
            results, now = advance(self.flow, session, update, idle, now)
            session = results[-1].session
            fired.extend(r.transition for r in results if r.transition)
            at += 1
            if session is not None and at - (cuts[-1][0] if cuts else 0) >= SEGMENT and _fresh(session, now):
                cuts = cuts + ((at, {"state": session.state, "data": json.loads(json.dumps(session.data))}),)
        return Node(session, now, node.path + tuple(move), tuple(fired), cuts)

    def run(self) -> None:
        total = len(self.flow.transitions)
        root = Node(None, CLOCK_START, (), ())
        queue: deque[Node] = deque()
        seen: dict[Any, set[str]] = {}
        for move in self.opening_moves():
            queue.append(self.play(root, move))
        while queue:
            if len(self.first) >= total:
                return
            if self.expanded >= self.max_nodes:
                self.exhausted = False
                return
            node = queue.popleft()
            k = self.key(node)
            if k is None:
                continue
            place, data = k
            variants = seen.setdefault(place, set())
            if data in variants or len(variants) >= MAX_VARIANTS:
                continue
            variants.add(data)
            self.expanded += 1
            assert node.session is not None
            self.reached.add(node.session.state)
            for move in self.moves(node.session):
                child = self.play(node, move)
                for tr_id in child.fired[len(node.fired):]:
                    self.first.setdefault(tr_id, child)
                if child.session is not None:
                    queue.append(child)

    def reason(self, tr: Transition) -> str:
        """Why no dialog fired this transition."""
        flow = self.flow
        source = flow.state(tr.source)
        if source is None:
            return f"its source state {tr.source} does not exist"
        if not flow.has_state(tr.target):
            return f"its target state {tr.target} does not exist"
        if source.final:
            return f"{tr.source} is final: the dialog ends on entering it"
        if tr.source not in self.reached:
            if not self.exhausted:
                return f"the search stopped after {self.expanded} dialogs before reaching {tr.source}"
            return f"no dialog reaches {tr.source} from the start"
        if tr.id in self.why:
            return self.why[tr.id]
        sp = self.fp.states[tr.source]
        if tr.on == "else" and sp.input is not None:
            return f"{tr.source} waits for input, so every message is input and the else never fires"
        if tr.on == "timeout" and sp.timeout is not None and sp.timeout is not tr:
            return f"{tr.source} already has the timeout {sp.timeout.id}; only the first one fires"
        if tr.on == "timeout" and float(tr.after or 0) >= float(flow.settings.session_ttl):
            return "its after is not below session_ttl: the dialog expires first"
        earlier = next((e for e in sp.on_input if e is not tr), None) if tr.on == "input" else None
        if earlier is not None and sp.on_input.index(earlier) < sp.on_input.index(tr) and not tr.conditions:
            held = " and ".join(describe(c) for c in earlier.conditions) or "no condition"
            return (f"every value {tr.source} accepts that was tried also satisfies the earlier input "
                    f"transition {earlier.id} ({held})")
        if tr.conditions:
            held = " and ".join(describe(c) for c in tr.conditions)
            return f"its condition ({held}) never held with the inputs and events tried"
        if not self.exhausted:
            return f"the search stopped after {self.expanded} dialogs"
        return "an earlier transition from the same state always takes its updates first"


def _expectation(before: dict[str, Any], obs: dict[str, Any]) -> dict[str, Any]:
    expect: dict[str, Any] = {"replies": obs["replies"], "state": obs["state"]}
    if any(row for rows in obs["buttons"] for row in rows):
        expect["buttons"] = obs["buttons"]
    changed = {k: v for k, v in obs["data"].items() if before.get(k) != v}
    if changed:
        expect["data"] = changed
    return expect


def record_case(flow: Flow, name: str, path: tuple[dict[str, Any], ...],
                start: dict[str, Any] | None = None) -> Case:
    """A case whose expectations are what the engine does now for these updates."""
    now = CLOCK_START
    session: Session | None = opening(flow, start, now)
    steps: list[Step] = []
    for raw in path:
        before = dict(session.data) if session is not None else {}
        update, idle = parse_update(raw)
        results, now = advance(flow, session, update, idle, now)
        session = results[-1].session
        steps.append(Step(dict(raw), _expectation(before, observe(results, session))))
    return Case(name, steps, start)


def segments(node: Node) -> list[tuple[dict[str, Any] | None, tuple[dict[str, Any], ...]]]:
    """A long dialog as pieces of about SEGMENT steps, each (start, updates), cut where the dialog had
    just entered a state afresh; a short dialog stays whole."""
    path = node.path
    if len(path) <= 2 * SEGMENT:
        return [(None, path)]
    cuts = [c for c in node.cuts if len(path) - c[0] >= SEGMENT // 2]
    starts: list[tuple[int, dict[str, Any] | None]] = [(0, None), *cuts]
    ends = [c[0] for c in cuts] + [len(path)]
    return [(start, path[at:end]) for (at, start), end in zip(starts, ends)]


def _name(flow: Flow, fired: tuple[str, ...], index: int, origin: str) -> str:
    """`3: ask_pdn → confirmed (pdn_yes_button)`: ids and arrows only, so it reads the same in every language
    (a generated name is kept with the test for good)."""
    by_id = {tr.id: tr for tr in flow.transitions}
    last = by_id.get(fired[-1]) if fired else None
    where = f"{origin} → {last.target}" if last is not None else origin
    via = f" ({', '.join(dict.fromkeys(fired))})" if fired else ""
    return f"{index}: {where}{via}"[:200]


def generate(flow: Flow, max_nodes: int = MAX_NODES) -> dict[str, Any]:
    """A small set of cases covering every transition the search can fire, and the uncovered ones with why."""
    search = Search(flow, max_nodes)
    search.run()
    remaining = set(search.first)
    nodes = list({id(n): n for n in search.first.values()}.values())
    covers = [frozenset(n.fired) for n in nodes]
    chosen: list[Node] = []
    while remaining:
        best = max(range(len(nodes)), key=lambda i: (len(remaining & covers[i]), -len(nodes[i].path)))
        gain = remaining & covers[best]
        if not gain:
            break
        chosen.append(nodes[best])
        remaining -= gain
    pieces: dict[str, tuple[dict[str, Any] | None, tuple[dict[str, Any], ...]]] = {}
    for node in chosen:
        for start, part in segments(node):
            pieces.setdefault(json.dumps([start, part], sort_keys=True, default=str), (start, part))
    cases: list[Case] = []
    fired: set[str] = set()
    for index, (start, part) in enumerate(pieces.values()):
        case = record_case(flow, f"generated {index + 1}", part, start)
        result = run_case(flow, case)
        fired.update(result.transitions)
        case.name = _name(flow, tuple(result.transitions), index + 1, start["state"] if start else flow.start)
        cases.append(case)
    uncovered = [{"transition": tr.id, "reason": search.reason(tr)} for tr in flow.transitions
                 if tr.id not in fired]
    total = len(flow.transitions)
    return {"tests": [c.to_dict() for c in cases], "uncovered": uncovered,
            "coverage": {"total": total, "covered": sorted(fired),
                         "percent": round(100.0 * len(fired) / total, 1) if total else 100.0},
            "searched": search.expanded}
