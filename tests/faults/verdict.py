"""Per user: were exactly the expected replies delivered, once each, in order, and how long did anyone wait."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from tests.faults.play import Player, Received


@dataclass
class Verdict:
    """The figures of one experiment, summed over its users."""

    users: int = 0
    expected: int = 0
    lost: int = 0
    doubled: int = 0  # extra copies of an expected reply
    doubled_unexplained: int = 0  # extra copies not accounted for by an unknown outcome
    unexpected: int = 0  # replies the dialog should never have given (a turn applied twice, say)
    out_of_order: int = 0
    unknown: int = 0  # sends MAX took while the sender could not know (hung up, connection cut)
    resumed: int = 0  # sends a replica took over from a sender that stopped, logged as of unknown outcome
    told: int = 0  # users told their place was lost (the store lost their dialog): the rest of theirs is excused
    users_hit: int = 0  # users with anything lost, doubled, unexpected or out of order
    stall: float = 0.0  # the longest wait for a step's replies, seconds
    notes: list[str] = field(default_factory=list)

    def add(self, other: Verdict) -> None:
        for name in ("users", "expected", "lost", "doubled", "doubled_unexplained", "unexpected", "out_of_order",
                     "unknown", "resumed", "told", "users_hit"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.stall = max(self.stall, other.stall)

    @property
    def clean(self) -> bool:
        """What the issue demands: nothing lost, doubled (beyond unknown outcomes), unexpected or out of order."""
        return not (self.lost or self.doubled_unexplained or self.unexpected or self.out_of_order)


def _lcs(a: list[str], b: list[str]) -> int:
    """Length of the longest common subsequence (replies per user are few, so O(n·m) is fine)."""
    if not a or not b:
        return 0
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def judge(player: Player, got: list[Received], *, ordered: bool = True, resumed: int = 0,
          lost_place: str | None = None) -> Verdict:
    """Compare what reached one user with what their steps should have brought.

    `lost_place`: the text that tells a user the store lost their dialog, in experiments that lose it on
    purpose. A user who got it is judged only on what reached them before it (nothing doubled or out of
    order; replies missing there went with the store, and the user was told): their dialog began again.

    `resumed`: the user's sends that a replica took over from a sender that had stopped, each logged as of
    unknown outcome (the sender may have died after MAX took it and before it could record so, which MAX
    cannot tell from a send that never happened): each explains one extra copy.
    """
    expected = player.expected
    told = lost_place is not None and any(r.text == lost_place for r in got)
    if told:
        got = got[:next(i for i, r in enumerate(got) if r.text == lost_place)]
    want, have = Counter(expected), Counter(r.text for r in got)
    unknown_copies = Counter(r.text for r in got if r.unknown)
    v = Verdict(users=1, expected=len(expected), unknown=sum(unknown_copies.values()), resumed=resumed)
    spare = resumed
    for text, count in have.items():
        if text not in want:
            v.unexpected += count
            continue
        extra = max(0, count - want[text])
        v.doubled += extra
        unexplained = max(0, extra - unknown_copies[text])
        taken = min(unexplained, spare)
        spare -= taken
        v.doubled_unexplained += unexplained - taken
    v.lost = 0 if told else sum(max(0, n - have[text]) for text, n in want.items())
    v.told = int(told)
    if ordered:
        seen: Counter[str] = Counter()
        kept = []
        for r in got:  # the first copies of expected replies, in the order the user saw them
            if seen[r.text] < want[r.text]:
                seen[r.text] += 1
                kept.append(r.text)
        present = []  # the expected replies that did arrive, in the order they should have
        for text in expected:
            if seen[text] > 0:  # (for a told user: what arrived before the notice, in the order it should)
                seen[text] -= 1
                present.append(text)
        v.out_of_order = len(kept) - _lcs(kept, present)
    v.stall = _stall(player, got)
    v.users_hit = int(bool(v.lost or v.doubled or v.unexpected or v.out_of_order or told))
    return v


def _stall(player: Player, got: list[Received]) -> float:
    """The longest time from sending a step to the arrival of its last reply (replies matched by occurrence)."""
    arrivals: dict[tuple[str, int], float] = {}
    counts: Counter[str] = Counter()
    for r in got:
        arrivals.setdefault((r.text, counts[r.text]), r.at)
        counts[r.text] += 1
    longest, used = 0.0, Counter()
    for step in player.steps:
        last = None
        for text in step.expected:
            at = arrivals.get((text, used[text]))
            used[text] += 1
            if at is not None:
                last = at if last is None else max(last, at)
        if last is not None and step.sent_at:
            longest = max(longest, last - step.sent_at)
    return longest
