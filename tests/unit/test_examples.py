"""The shipped examples load, validate without errors, show the features they are for, and run."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from flows.engine import step
from flows.load import load_text
from flows.model import Flow
from flows.dialog import StepResult, Update
from flows.validate import validation_result

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.json"))
T0 = 1_700_000_000.0


def example(name: str) -> Flow:
    return load_text((ROOT / "examples" / f"{name}.json").read_bytes())


class Talk:
    """One user talking to a flow through the engine, with a clock."""

    def __init__(self, flow: Flow) -> None:
        self.flow, self.dialog, self.now = flow, None, T0
        self.last: StepResult | None = None

    def send(self, update: Update, *, after: float = 1.0) -> StepResult:
        self.now += after
        self.last = step(self.flow, self.dialog, update, self.now)
        self.dialog = self.last.dialog
        return self.last

    def text(self, text: str) -> StepResult:
        return self.send(Update.message(text))

    def press(self, payload: str) -> StepResult:
        return self.send(Update.button(payload))

    @property
    def state(self) -> str | None:
        return self.dialog.state if self.dialog else None

    @property
    def data(self) -> dict[str, Any]:
        assert self.dialog is not None
        return self.dialog.data


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_loads_and_has_no_errors(path: Path) -> None:
    flow = load_text(path.read_bytes())
    result = validation_result(flow)
    assert [i for i in result["issues"] if i["severity"] == "error"] == []
    assert result["ok"] is True


@pytest.mark.parametrize("name", ["booking", "order", "support"])
def test_example_is_laid_out_top_down(name: str) -> None:
    flow = example(name)
    assert set(flow.layout) == {s.id for s in flow.states}
    top = flow.layout[flow.start]["y"]
    assert all(flow.layout[s.id]["y"] > top for s in flow.states if s.id != flow.start)
    lowest = max(pos["y"] for pos in flow.layout.values())
    assert all(flow.layout[s.id]["y"] == lowest for s in flow.states if s.final)


def test_booking_covers_its_features() -> None:
    flow = example("booking")
    inputs = {s.id: s.input.type for s in flow.states if s.input}
    assert inputs == {"choose_service": "choice", "ask_date": "date", "choose_time": "choice",
                      "ask_phone": "phone"}
    assert flow.settings.reminder is not None and flow.settings.reminder.after < flow.settings.session_ttl
    back = flow.command("back")
    assert back is not None and "back" in back.match
    confirm = flow.state("confirm_booking")
    assert confirm is not None
    assert {b.payload for row in confirm.say[0].buttons for b in row} == {"confirm", "change", "cancel_booking"}


def test_booking_dialog_with_back_and_a_bad_date() -> None:
    d = Talk(example("booking"))
    d.text("Здравствуйте")
    assert d.state == "choose_service"
    d.press("Маникюр")
    d.press("master_olga")
    assert d.state == "ask_date" and d.data == {"service": "Маникюр", "master": "Ольга"}
    assert d.text("31.02.2025").outcome == "input_invalid"
    d.text("15.03.2025")
    assert d.state == "choose_time" and d.data["date"] == "2025-03-15"
    d.press("back")
    assert d.state == "ask_date"
    d.text("16.03.2025")
    d.press("12:00")
    d.text("8 (912) 345-67-89")
    assert d.state == "confirm_booking"
    summary = d.last.replies[0].text
    assert "Маникюр" in summary and "Ольга" in summary and "2025-03-16, 12:00" in summary
    assert "+79123456789" in summary
    result = d.press("confirm")
    assert result.completed is not None and result.completed.state == "booked"
    assert d.dialog is None


def test_booking_reminder_offers_to_cancel() -> None:
    d = Talk(example("booking"))
    d.text("Здравствуйте")
    reminder = d.send(Update.tick(), after=601)
    assert reminder.outcome == "reminder" and "не закончили запись" in reminder.replies[0].text
    assert d.press("/cancel").outcome == "command:cancel" and d.dialog is None


def test_order_covers_its_features() -> None:
    flow = example("order")
    quantity = flow.state("ask_quantity")
    assert quantity is not None and quantity.input is not None
    assert (quantity.input.type, quantity.input.min, quantity.input.max) == ("integer", 1, 100)
    guards = {(c.var, c.op, c.value) for t in flow.transitions for c in t.conditions}
    assert {("quantity", "ge", 10), ("delivery", "eq", "courier")} <= guards
    assert any("{" in value for t in flow.transitions for _, value in t.set)
    webhooks = [t for t in flow.transitions for a in t.actions
                if a.type == "webhook" and a.url == "https://crm.example/orders"]
    assert webhooks and all(flow.state(t.target).final for t in webhooks)
    assert any(t.on == "event" and t.name == "payment" for t in flow.transitions)


def test_order_wholesale_by_courier_then_paid() -> None:
    d = Talk(example("order"))
    d.text("Привет")
    d.press("coffee")
    assert d.text("0").outcome == "input_invalid"
    assert d.text("101").outcome == "input_invalid"
    d.text("12")
    assert d.state == "wholesale_discount" and d.data["discount"] == "10"
    assert d.data["order_line"] == "Кофе в зёрнах, 1 кг × 12 шт. по 1200 ₽"
    d.press("continue")
    d.press("courier")
    assert d.state == "ask_address" and d.data["delivery"] == "courier"
    d.text("Москва, ул. Тверская, 1, кв. 5")
    assert d.state == "confirm_order"
    # A payment event with a status no transition expects changes nothing.
    assert d.send(Update.event("payment", {"payment_status": "pending"})).transition is None
    assert d.state == "confirm_order" and d.data["payment_status"] == "pending"
    paid = d.send(Update.event("payment", {"payment_status": "succeeded", "payment_id": "pay-42"}))
    assert paid.transition == "payment_succeeded" and d.dialog is None
    assert [(e.type, e.url) for e in paid.effects] == [("webhook", "https://crm.example/orders")]
    data = paid.effects[0].data
    assert data["payment_id"] == "pay-42" and data["address"] == "Москва, ул. Тверская, 1, кв. 5"


def test_order_retail_pickup_and_a_failed_payment() -> None:
    d = Talk(example("order"))
    d.text("Привет")
    d.press("tea")
    d.text("3")
    assert d.state == "choose_delivery" and d.data["discount"] == "0"
    d.press("pickup")
    assert d.state == "confirm_order" and d.data["address"] == "пункт выдачи на ул. Ленина, 1"
    d.send(Update.event("payment", {"payment_status": "failed"}))
    assert d.state == "payment_failed"
    assert d.press("cancel_order").completed.state == "order_cancelled"


def test_support_covers_its_features() -> None:
    flow = example("support")
    shot = flow.state("ask_screenshot")
    assert shot is not None and shot.input is not None
    assert (shot.input.type, set(shot.input.kinds), shot.input.max_attempts) == ("attachment", {"image", "file"}, 3)
    triggers = {(t.source, t.on): t.target for t in flow.transitions}
    assert triggers[("ask_screenshot", "invalid")] == "screenshot_skipped"
    assert triggers[("waiting_operator", "event")] == "ticket_resolved"
    assert triggers[("waiting_operator", "timeout")] == "operators_busy"


def _to_screenshot(d: Talk) -> None:
    d.text("Здравствуйте")
    d.press("bug")
    d.text("Приложение закрывается при входе в профиль")
    assert d.state == "ask_screenshot"


def test_support_three_wrong_inputs_take_the_skip_path() -> None:
    d = Talk(example("support"))
    _to_screenshot(d)
    assert d.text("у меня нет").outcome == "input_invalid"
    assert d.text("не могу").outcome == "input_invalid"
    assert d.text("вот").transition == "screenshot_failed"
    assert d.state == "screenshot_skipped"
    d.press("send")
    assert d.state == "waiting_operator" and "без скриншота" in d.last.replies[0].text
    assert d.send(Update.event("ticket_resolved")).completed.state == "ticket_resolved"


def test_support_screenshot_then_operators_busy_on_timeout() -> None:
    d = Talk(example("support"))
    _to_screenshot(d)
    d.send(Update.message(None, [{"type": "image", "payload": {"url": "https://files.example/1.png"}}]))
    assert d.state == "waiting_operator" and d.data["screenshot_note"] == "скриншот приложен"
    d.text("Забыл: телефон Android 14")
    assert d.state == "waiting_operator" and d.data["followup"] == "Забыл: телефон Android 14"
    assert d.send(Update.tick(), after=1700).transition is None
    result = d.send(Update.tick(), after=101)
    assert result.transition == "no_operator" and result.completed.state == "operators_busy"
