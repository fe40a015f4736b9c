"""Generated tests: a search over the dialog graph, with the engine as the oracle, for dialogs that
together fire every transition; the ones no dialog fires are named with the reason."""
from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass
from typing import Any

from flows.conditions import check, describe
from flows.firing import FlowPlan, StatePlan, plan
from flows.model import Condition, Flow, Input, Transition
from flows.dialog import Dialog
from flows.testing.cases import Case, Step
from flows.testing.examples import attachment, condition_values, invalid_input, pattern_example, valid_inputs
from flows.testing.coverage import hits, points
from flows.testing.runner import CLOCK_START, advance, observe, opening, run_case
from flows.testing.updates import parse_update
from flows.testing.words import case_name, state_title

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
    """A point the search reached: the dialog record there, the clock and the updates that led there."""

    dialog: Dialog | None
    now: float
    path: tuple[dict[str, Any], ...]
    fired: tuple[str, ...]
    # (index into path, {"state", "data"}) where the dialog had just entered a state afresh, about
    # SEGMENT steps apart: where a long dialog may be cut (see `segments`).
    cuts: tuple[tuple[int, dict[str, Any]], ...] = ()
    # Coverage point keys the dialog touched (flows.testing.coverage.points).
    touched: tuple[str, ...] = ()
    # The last place the dialog had just entered a state afresh: a dialog that ends in a side step
    # there (invalid input, a command, a button no transition takes) is cut there too.
    entry: tuple[int, dict[str, Any]] | None = None


def _fresh(s: Dialog, now: float) -> bool:
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
        self.points = points(flow)
        self.first: dict[str, Node] = {}  # point key -> the first node whose last move touched it
        self.why: dict[str, str] = {}
        self.reached: set[str] = set()
        self.expanded = 0
        self.exhausted = True

    def key(self, node: Node) -> Any:
        s = node.dialog
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

    def moves(self, s: Dialog) -> list[list[dict[str, Any]]]:
        sp = self.fp.states.get(s.state)
        if sp is None:
            return []
        out = self._matcher_moves(sp)
        if sp.input is not None:
            out += self._input_moves(sp, sp.input, s)
        elif sp.on_else:
            out.append([{"text": OTHER_TEXT}])
        out += self._untried_moves(sp, s)
        if sp.timeout is not None:
            out.append([{"idle": float(sp.timeout.after or 0)}])
        reminder = self.flow.settings.reminder
        if reminder is not None and not s.reminded and sp.timeout is None:
            out.append([{"idle": float(reminder.after)}])
        return out

    def _matcher_moves(self, sp: StatePlan) -> list[list[dict[str, Any]]]:
        """A press, text, attachment or event each matching transition of the state takes."""
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
        return out

    def _input_moves(self, sp: StatePlan, inp: Input, s: Dialog) -> list[list[dict[str, Any]]]:
        """Valid inputs (those the `input` transitions' conditions want too), then invalid ones up to the limit."""
        conds = [c for tr in sp.on_input for c in tr.conditions]
        good, why = valid_inputs(inp, _wanted(conds, inp.save_as) if inp.save_as else [])
        out: list[list[dict[str, Any]]] = [[u] for u in good]
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
        return out

    def _untried_moves(self, sp: StatePlan, s: Dialog) -> list[list[dict[str, Any]]]:
        """Buttons no transition takes, and commands: tried only until some dialog has, so they cost the
        search a few moves rather than a branch at every state."""
        out: list[list[dict[str, Any]]] = []
        taken = {tr.payload for on, tr, _, _ in sp.matchers if on == "button"}
        state = self.flow.state(s.state)
        for message in state.say if state is not None else ():
            for row in message.buttons:
                for b in row:
                    if (b.payload is not None and b.payload not in taken
                            and f"button:{s.state}:{b.payload}" not in self.first):
                        taken.add(b.payload)
                        out.append([{"payload": b.payload}])
        for name, cmd in self.flow.commands.items():
            if cmd is not None and cmd.match and f"command:{name}" not in self.first:
                out.append([{"text": cmd.match[0]}])
        return out

    def play(self, node: Node, move: list[dict[str, Any]]) -> Node:
        dialog, now, fired, cuts = node.dialog, node.now, list(node.fired), node.cuts
        touched, entry = list(node.touched), node.entry
        at = len(node.path)
        for raw in move:
            update, idle = parse_update(raw)
            before = dialog
            results, now = advance(self.flow, dialog, update, idle, now)
            touched.extend(hits(before, update, results))
            dialog = results[-1].dialog
            fired.extend(r.transition for r in results if r.transition)
            at += 1
            if dialog is not None and _fresh(dialog, now):
                entry = (at, {"state": dialog.state, "data": json.loads(json.dumps(dialog.data))})
                if at - (cuts[-1][0] if cuts else 0) >= SEGMENT:
                    cuts = cuts + (entry,)
        return Node(dialog, now, node.path + tuple(move), tuple(fired), cuts, tuple(touched), entry)

    def note(self, child: Node) -> None:
        """Record the points a dialog touched; a dialog that touches all a recorded one did and more takes
        its place, so fewer, longer dialogs cover the same."""
        mine = set(child.touched)
        verdict: dict[int, bool] = {}
        for key in mine:
            held = self.first.get(key)
            if held is None:
                self.first[key] = child
                continue
            if id(held) not in verdict:
                verdict[id(held)] = len(held.touched) < len(child.touched) and mine.issuperset(held.touched)
            if verdict[id(held)]:
                self.first[key] = child

    def run(self) -> None:
        total = len(self.points)
        root = Node(None, CLOCK_START, (), ())
        queue: deque[Node] = deque()
        seen: dict[Any, set[str]] = {}
        for move in self.opening_moves():
            child = self.play(root, move)
            self.note(child)
            queue.append(child)
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
            assert node.dialog is not None
            self.reached.add(node.dialog.state)
            for move in self.moves(node.dialog):
                child = self.play(node, move)
                self.note(child)
                if child.dialog is not None:
                    queue.append(child)

    def reason(self, tr: Transition) -> str:
        """Why no dialog fired this transition."""
        flow = self.flow
        source = flow.state(tr.source)
        src, dst = state_title(flow, tr.source), state_title(flow, tr.target)
        if source is None:
            return f"its source state {src} does not exist"
        if not flow.has_state(tr.target):
            return f"its target state {dst} does not exist"
        if source.final:
            return f"{src} is final: the dialog ends on entering it"
        if tr.source not in self.reached:
            if not self.exhausted:
                return f"the search stopped after {self.expanded} dialogs before reaching {src}"
            return f"no dialog reaches {src} from the start"
        if tr.id in self.why:
            return self.why[tr.id]
        sp = self.fp.states[tr.source]
        if tr.on == "else" and sp.input is not None:
            return f"{src} waits for input, so every message is input and the else never fires"
        if tr.on == "timeout" and sp.timeout is not None and sp.timeout is not tr:
            return f"{src} already has the timeout {sp.timeout.id}; only the first one fires"
        if tr.on == "timeout" and float(tr.after or 0) >= float(flow.settings.session_ttl):
            return "its after is not below session_ttl: the dialog expires first"
        earlier = next((e for e in sp.on_input if e is not tr), None) if tr.on == "input" else None
        if earlier is not None and sp.on_input.index(earlier) < sp.on_input.index(tr) and not tr.conditions:
            held = " and ".join(describe(c) for c in earlier.conditions) or "no condition"
            return (f"every value {src} accepts that was tried also satisfies the earlier input "
                    f"transition {earlier.id} ({held})")
        if tr.conditions:
            held = " and ".join(describe(c) for c in tr.conditions)
            return f"its condition ({held}) never held with the inputs and events tried"
        if not self.exhausted:
            return f"the search stopped after {self.expanded} dialogs"
        return "an earlier transition from the same state always takes its updates first"


    def point_reason(self, point: dict[str, Any]) -> str:
        """Why no dialog touched this point (a transition's reason for a transition)."""
        kind = point["kind"]
        where = state_title(self.flow, point.get("state"))
        if "transition" in point:
            tr = next(t for t in self.flow.transitions if t.id == point["transition"])
            return self.reason(tr)
        if kind in ("invalid", "button") and point["state"] not in self.reached:
            if not self.exhausted:
                return f"the search stopped after {self.expanded} dialogs before reaching {where}"
            return f"no dialog reaches {where} from the start"
        if kind == "invalid":
            st = self.flow.state(point["state"])
            if st is not None and st.input is not None and invalid_input(st.input) is None:
                return f"every message is valid input of type {st.input.type}, so no input is ever invalid"
        if kind == "reminder":
            return "every state the search reached has a timeout, which wins over the reminder"
        if not self.exhausted:
            return f"the search stopped after {self.expanded} dialogs"
        return "no dialog the search tried touches it"


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
    dialog: Dialog | None = opening(flow, start, now)
    steps: list[Step] = []
    for raw in path:
        before = dict(dialog.data) if dialog is not None else {}
        update, idle = parse_update(raw)
        results, now = advance(flow, dialog, update, idle, now)
        dialog = results[-1].dialog
        steps.append(Step(dict(raw), _expectation(before, observe(results, dialog))))
    return Case(name, steps, start)


def segments(node: Node) -> list[tuple[dict[str, Any] | None, tuple[dict[str, Any], ...]]]:
    """A long dialog as pieces of about SEGMENT steps, each (start, updates), cut where the dialog had
    just entered a state afresh; a short dialog stays whole."""
    path = node.path
    if len(path) <= SEGMENT:
        return [(None, path)]
    cuts = [c for c in node.cuts if len(path) - c[0] >= SEGMENT // 2] if len(path) > 2 * SEGMENT else []
    if node.entry is not None and len(path) > node.entry[0] > (cuts[-1][0] if cuts else 0):
        cuts.append(node.entry)
    starts: list[tuple[int, dict[str, Any] | None]] = [(0, None), *cuts]
    ends = [c[0] for c in cuts] + [len(path)]
    return [(start, path[at:end]) for (at, start), end in zip(starts, ends)]


def generate(flow: Flow, max_nodes: int = MAX_NODES) -> dict[str, Any]:
    """A small set of cases covering every transition the search can fire, and the uncovered ones with why."""
    search = Search(flow, max_nodes)
    search.run()
    remaining = set(search.first)
    nodes = list({id(n): n for n in search.first.values()}.values())
    covers = [frozenset(n.touched) for n in nodes]
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
    # A piece that begins another one from the same start touches nothing the longer one does not.
    kept = list(pieces.values())
    kept = [(start, part) for start, part in kept
            if not any(o is not part and o_start == start and len(o) > len(part) and o[:len(part)] == part
                       for o_start, o in kept)]
    cases: list[Case] = []
    fired: set[str] = set()
    touched: set[str] = set()
    for index, (start, part) in enumerate(kept):
        case = record_case(flow, f"generated {index + 1}", part, start)
        result = run_case(flow, case)
        fired.update(result.transitions)
        touched.update(result.touched)
        case.name = case_name(flow, result.touched, result.transitions, index + 1,
                              start["state"] if start else flow.start)
        cases.append(case)
    uncovered = [{"transition": tr.id, "reason": search.reason(tr)} for tr in flow.transitions
                 if tr.id not in fired]
    total = len(flow.transitions)
    every = points(flow)
    missing = [{**p, "reason": search.point_reason(p)} for p in every if p["key"] not in touched]
    covered_points = len(every) - len(missing)
    point_summary = {"total": len(every), "covered": covered_points, "missing": missing,
                     "percent": round(100.0 * covered_points / len(every), 1) if every else 100.0}
    return {"tests": [c.to_dict() for c in cases], "uncovered": uncovered,
            "coverage": {"total": total, "covered": sorted(fired),
                         "percent": round(100.0 * len(fired) / total, 1) if total else 100.0,
                         "points": point_summary},
            "searched": search.expanded}
