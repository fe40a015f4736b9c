"""What a turn adds to the funnel counters, folded from the engine's events, and medians from buckets."""
from __future__ import annotations

import json
from pathlib import Path

from flows.engine import step
from flows.load import load
from flows.dialog import Dialog, Update
from server.runtime import turn_events
from server.runtime.funnel_counts import BUCKETS, Counts, bucket, group, median_seconds
from server.runtime.stores.base import TurnCommit
from server.runtime.funnel_report import report

ROOT = Path(__file__).resolve().parents[2]
NOW = 1_790_000_000.0


def flow():
    doc = json.loads((ROOT / "examples" / "registration.json").read_text(encoding="utf-8"))
    compiled = load(doc)
    return compiled


def run(updates: list[tuple[float, Update]]) -> list[list[str]]:
    """The counted fields of each turn of one dialog."""
    f = flow()
    session: Dialog | None = None
    out = []
    for at, update in updates:
        expired = session is not None and at >= session.updated_at + f.settings.session_ttl
        result = step(f, session, update, at)
        live = None if expired else session
        counts = Counts([], prior_gone=live is None)
        turn_events.fold(result.events, turn_events.Fold(TurnCommit(None), "bot", "1", None, at, live, counts))
        assert all(g == group(f.id, None, at) for g, _ in counts.pairs)
        out.append([field for _, field in counts.pairs] + (["prior_gone"] if counts.prior_gone else []))
        session = result.dialog
    return out


def test_a_dialog_to_its_final_state() -> None:
    fields = run([(NOW, Update.message("hi")), (NOW + 4, Update.message("Иван")),
                  (NOW + 5, Update.message("+79001234567")), (NOW + 6, Update.message("a@b.ru")),
                  (NOW + 70, Update.button("yes"))])
    assert fields == [
        ["e:ask_name", "prior_gone"],
        [f"f:name_ok:{bucket(4)}"],
        [f"f:phone_ok:{bucket(1)}"],
        [f"f:email_ok:{bucket(1)}"],
        [f"f:pdn_yes_button:{bucket(64)}"],
    ]


def test_invalid_input_cancel_restart_back_and_expiry() -> None:
    ttl = flow().settings.session_ttl
    fields = run([(NOW, Update.message("hi")), (NOW + 1, Update.message("Иван")),
                  (NOW + 2, Update.message("not a phone")), (NOW + 3, Update.message("назад")),
                  (NOW + 4, Update.message("/start")), (NOW + 5, Update.message("/cancel")),
                  (NOW + 6, Update.message("hi")), (NOW + 7 + ttl, Update.message("hi"))])
    assert fields == [
        ["e:ask_name", "prior_gone"],
        [f"f:name_ok:{bucket(1)}"],
        [],  # an invalid input moves nothing
        [f"b:ask_phone:{bucket(2)}", "e:ask_name"],
        [f"r:ask_name:{bucket(1)}", "e:ask_name"],
        [f"c:ask_name:{bucket(1)}"],
        ["e:ask_name", "prior_gone"],
        ["e:ask_name", "prior_gone"],  # the store counts the expired one, which only it still holds
    ]


def test_median_is_read_from_the_bucket_holding_the_middle_dialog() -> None:
    assert median_seconds({}) is None
    assert median_seconds({bucket(3): 1}) == 5
    assert median_seconds({bucket(1): 2, bucket(50): 1, bucket(10_000): 2}) == 60
    assert median_seconds({len(BUCKETS): 3}) == BUCKETS[-1]


def test_a_report_names_every_state_and_who_left_how() -> None:
    fields = {"e:ask_name": 5, "f:name_ok:0": 3, "c:ask_name:5": 1, "x:ask_name": 1,
              "e:gone_state": 2, "f:pdn_yes_button:3": 2, "f:pdn_yes_text:3": 1, "f:loop:s": 4}
    rep = report(flow(), 3, fields)
    states = {s["id"]: s for s in rep["states"]}
    assert states["ask_name"]["entered"] == 5 and states["ask_name"]["left"] == {"name_ok": 3}
    assert states["ask_name"]["ended"]["cancel"] == 1 and states["ask_name"]["ended"]["expired"] == 1
    assert states["ask_name"]["median_seconds"] == 1
    assert states["gone_state"]["known"] is False and states["confirmed"]["final"] is True
    # entering by a transition, and completing at a final state, are read from the fires
    assert states["ask_phone"]["entered"] == 3
    assert states["confirmed"]["entered"] == 3 and states["confirmed"]["ended"]["completed"] == 3
    assert {t["id"]: t["fired"] for t in rep["transitions"]}["name_ok"] == 3
    assert rep["start"] == "ask_name" and rep["version"] == 3
