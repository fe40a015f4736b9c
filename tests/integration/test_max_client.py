"""MaxClient against the fake MAX server over loopback HTTP: calls, errors, rate limit."""
from __future__ import annotations

import asyncio
import socket
import time
import traceback
from pathlib import Path

import pytest

from flows.dialog import Reply
from server.channels.max.client import MaxApiError, MaxClient
from server.channels.max.render import answer_body, message_body, text_body
from server.db.engine import Database
from server.channels.max.poll import Redeliver, poll_updates
from server.poll import poll
from server.channels.ratelimit import RateLimiter
from server.channels.max.subscribe import CliError, subscribe, webhook_url
from server.channels.max.updates import HANDLED
from server.db.sealed import BOX
from server.settings import Settings
from tests.fakemax import FAKE_TOKEN, FakeMax, fake_max, fake_max_server  # noqa: F401 (fixtures)

SECRET_TOKEN = "tok-DO-NOT-LEAK-7f3a9c"
KNOWN_TOKEN = "known-token-DO-NOT-LEAK-5be1"


@pytest.fixture
async def client(fake_max: FakeMax):
    client = MaxClient(fake_max.url, rate=1000, timeout=5)
    yield client
    await client.aclose()


async def test_send_with_keyboard_reaches_the_api_as_documented(client: MaxClient, fake_max: FakeMax) -> None:
    reply = Reply("Согласны?", [[{"text": "Да", "payload": "yes"}, {"text": "Сайт", "url": "https://ex.ru"}]])
    answer = await client.send_message(FAKE_TOKEN, chat_id=472107880, body=message_body(reply))
    assert fake_max.sent_messages(chat_id=472107880) == [{
        "text": "Согласны?",
        "attachments": [{"type": "inline_keyboard", "payload": {"buttons": [[
            {"type": "callback", "text": "Да", "payload": "yes"},
            {"type": "link", "text": "Сайт", "url": "https://ex.ru"}]]}}], "link": None}]
    assert answer["message"]["body"]["mid"].startswith("mid.")
    assert answer["message"]["recipient"]["chat_id"] == 472107880
    call = fake_max.calls[-1]
    assert call["headers"]["authorization"] == "<redacted>"
    assert call["query"] == {"chat_id": "472107880"}


async def test_plain_reply_has_no_attachments_and_goes_to_a_user(client: MaxClient, fake_max: FakeMax) -> None:
    await client.send_message(FAKE_TOKEN, user_id=212843158, body=message_body(Reply("Привет")))
    assert fake_max.sent_messages(user_id=212843158) == [{"text": "Привет", "attachments": [], "link": None}]
    assert fake_max.sent_messages(chat_id=1) == []


async def test_send_needs_exactly_one_recipient(client: MaxClient) -> None:
    with pytest.raises(ValueError):
        await client.send_message(FAKE_TOKEN, body=text_body("x"))
    with pytest.raises(ValueError):
        await client.send_message(FAKE_TOKEN, chat_id=1, user_id=2, body=text_body("x"))


async def test_answer_callback_sends_only_the_fields_that_are_set(client: MaxClient, fake_max: FakeMax) -> None:
    assert await client.answer_callback(FAKE_TOKEN, "cb-1") == {"success": True}
    await client.answer_callback(FAKE_TOKEN, "cb-2", answer_body(notification="Принято"))
    assert [call["json"] for call in fake_max.calls] == [{}, {"notification": "Принято"}]


async def test_subscribe_list_and_unsubscribe(client: MaxClient, fake_max: FakeMax) -> None:
    url = "https://bots.example/webhooks/max/shop"
    await client.subscribe(FAKE_TOKEN, url, "s3cret_value", ["message_created", "message_callback"])
    subs = await client.subscriptions(FAKE_TOKEN)
    assert [(s["url"], s["update_types"]) for s in subs] == [(url, ["message_created", "message_callback"])]
    assert fake_max.subscriptions()[0]["secret"] == "s3cret_value"
    await client.unsubscribe(FAKE_TOKEN, url)
    assert await client.subscriptions(FAKE_TOKEN) == []


async def test_long_poll_waits_for_an_update_and_marker_commits(client: MaxClient, fake_max: FakeMax) -> None:
    update = {"update_type": "message_created", "timestamp": 1, "message": {"body": {"mid": "m1", "text": "hi"}}}
    asyncio.get_running_loop().call_later(0.2, fake_max.push_update, update)
    first = await client.get_updates(FAKE_TOKEN, timeout=10)
    assert first["updates"] == [update]
    again = await client.get_updates(FAKE_TOKEN, timeout=0)
    assert again["updates"] == [update], "without a marker nothing is committed yet"
    empty = await client.get_updates(FAKE_TOKEN, marker=first["marker"], timeout=0)
    assert empty["updates"] == []
    assert isinstance(empty["marker"], int)


async def test_updates_limit_and_types(client: MaxClient, fake_max: FakeMax) -> None:
    for i in range(3):
        fake_max.push_update({"update_type": "message_created", "n": i})
    fake_max.push_update({"update_type": "bot_started", "n": 3})
    page = await client.get_updates(FAKE_TOKEN, timeout=0, limit=2)
    assert [u["n"] for u in page["updates"]] == [0, 1]
    rest = await client.get_updates(FAKE_TOKEN, marker=page["marker"], timeout=0, types=["bot_started"])
    assert [u["n"] for u in rest["updates"]] == [3]


@pytest.mark.parametrize("status", [429, 500, 503])
async def test_overload_and_server_errors_are_retryable(client: MaxClient, fake_max: FakeMax, status: int) -> None:
    fake_max.fail_next(1, status=status, path="/messages")
    with pytest.raises(MaxApiError) as info:
        await client.send_message(FAKE_TOKEN, chat_id=1, body=text_body("x"))
    assert (info.value.status, info.value.retryable) == (status, True)
    await client.send_message(FAKE_TOKEN, chat_id=1, body=text_body("x"))
    assert len(fake_max.sent_messages(chat_id=1)) == 1


async def test_bad_request_is_permanent(client: MaxClient) -> None:
    with pytest.raises(MaxApiError) as info:
        await client.send_message(FAKE_TOKEN, chat_id=1, body=text_body("x" * 4001))
    assert (info.value.status, info.value.code, info.value.retryable) == (400, "proto.payload", False)


async def test_no_answer_after_the_request_went_out_is_an_unknown_outcome(fake_max: FakeMax) -> None:
    fake_max.delay_next(1, 2.0)
    async with MaxClient(fake_max.url, timeout=0.3) as client:
        with pytest.raises(MaxApiError) as info:
            await client.send_message(FAKE_TOKEN, chat_id=1, body=text_body("x"))
    # MAX may have sent the message: retrying could send it twice.
    assert (info.value.status, info.value.code, info.value.retryable, info.value.unknown) == (
        None, "unknown_outcome", False, True)


async def test_connection_refused_is_retryable() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    async with MaxClient(f"http://127.0.0.1:{port}") as client:
        with pytest.raises(MaxApiError) as info:
            await client.answer_callback(FAKE_TOKEN, "cb")
    assert (info.value.status, info.value.retryable) == (None, True)


async def test_token_never_appears_in_errors() -> None:
    with FakeMax(tokens={KNOWN_TOKEN}) as fake:
        async with MaxClient(fake.url, timeout=0.3) as client:
            errors = []
            for trouble in (None, "fail", "delay"):
                if trouble == "fail":
                    fake.fail_next(1, status=500)
                elif trouble == "delay":
                    fake.delay_next(1, 1.0)
                try:
                    # The unknown token also gets a 401 on the first round.
                    await client.send_message(SECRET_TOKEN if trouble is None else KNOWN_TOKEN,
                                              chat_id=1, body=text_body("x"))
                except MaxApiError as exc:
                    errors.append(exc)
    assert [e.status for e in errors] == [401, 500, None]
    assert errors[0].retryable is False
    for exc in errors:
        # The whole rendered traceback, chained network errors included (source lines name no token).
        text = str(exc) + repr(exc) + "".join(traceback.format_exception(exc, chain=True))
        assert SECRET_TOKEN not in text and KNOWN_TOKEN not in text
    recorded = str(fake.calls)
    assert SECRET_TOKEN not in recorded and KNOWN_TOKEN not in recorded


def busiest_second(times: list[float]) -> int:
    """The most calls that arrived within any one-second window."""
    times = sorted(times)
    return max(sum(1 for t in times[i:] if t < start + 1.0) for i, start in enumerate(times))


async def test_rate_limit_keeps_each_bot_under_its_rate(fake_max: FakeMax) -> None:
    rate, count = 10, 30
    other = "second-bot-token"
    with FakeMax(tokens={FAKE_TOKEN, other}) as fake:
        async with MaxClient(fake.url, rate=rate) as client:
            await asyncio.gather(*(client.send_message(token, chat_id=i, body=text_body("x"))
                                   for i in range(count) for token in (FAKE_TOKEN, other)))
        arrivals = {token: [c["time"] for c in fake.requests("POST", "/messages", token)]
                    for token in (FAKE_TOKEN, other)}
    for times in arrivals.values():
        assert len(times) == count
        # Slots are 1/rate s apart. Arrival jitter only delays calls, so over the whole run the mean rate
        # stays at `rate`; a busy machine may bunch a few late calls into one second, never a burst of 2N.
        assert (count - 1) / (max(times) - min(times)) <= rate * 1.05
        assert busiest_second(times) <= rate * 1.25 + 2
    # The limit is per bot, not per client: both bots went side by side, well above one bot's rate.
    assert busiest_second(arrivals[FAKE_TOKEN] + arrivals[other]) >= rate * 1.5


async def test_calls_in_flight_are_capped_but_long_polls_are_not(fake_max: FakeMax) -> None:
    fake_max.delay_next(3, 0.4, path="/messages")
    async with MaxClient(fake_max.url, rate=1000, concurrency=1) as client:
        poll = asyncio.create_task(client.get_updates(FAKE_TOKEN, timeout=10))
        await fake_max.wait_for(lambda f: any(c["path"] == "/updates" for c in f.calls))
        await asyncio.gather(*(client.send_message(FAKE_TOKEN, chat_id=i, body=text_body("x")) for i in range(3)))
        assert not poll.done(), "the sends did not wait for the slot of the pending long poll"
        fake_max.push_update({"update_type": "bot_started"})
        assert len((await poll)["updates"]) == 1
    arrivals = sorted(c["time"] for c in fake_max.requests("POST", "/messages"))
    # One at a time, each held 0.4 s by the server: each send waited for the one before to finish.
    assert arrivals[1] - arrivals[0] >= 0.35 and arrivals[2] - arrivals[1] >= 0.35


async def test_rate_limiter_serves_waiters_in_arrival_order() -> None:
    limiter = RateLimiter(100)
    order: list[str] = []

    async def take(key: str, label: str) -> None:
        await limiter.acquire(key)
        order.append(label)

    backlog = [asyncio.create_task(take("bot", str(i))) for i in range(30)]
    await asyncio.sleep(0)
    await take("other-bot", "other")
    await asyncio.gather(*backlog)
    assert [label for label in order if label != "other"] == [str(i) for i in range(30)]
    assert order.index("other") < 5, "an idle bot is not queued behind a busy one"


async def test_a_failing_shared_schedule_leaves_the_rate_to_the_process() -> None:
    class Down:
        asked = 0

        async def run(self, *_args: object) -> None:
            Down.asked += 1
            raise ConnectionError("redis is down")

    limiter = RateLimiter(20, redis=Down(), prefix="rate:")
    started = time.monotonic()
    for _ in range(3):
        await limiter.acquire("bot")
    assert Down.asked == 3, "each call asks the shared schedule first"
    assert time.monotonic() - started >= 0.09, "3 calls at 20/s: the process's bucket spaced them 50 ms apart"


async def test_poll_delivers_in_order_retries_and_asks_only_for_handled_types(fake_max: FakeMax) -> None:
    for n, kind in enumerate(["message_created", "message_edited", "message_callback", "bot_started"]):
        fake_max.push_update({"update_type": kind, "n": n})
    fake_max.fail_next(1, status=503, path="/updates")
    seen: list[int] = []
    refusals = [Redeliver("storage is down")]
    stop = asyncio.Event()

    async def deliver(update: dict) -> None:
        if update["n"] == 2 and refusals:
            raise refusals.pop()
        seen.append(update["n"])
        if len(seen) == 3:
            stop.set()

    async with MaxClient(fake_max.url) as client:
        await asyncio.wait_for(poll_updates(client, FAKE_TOKEN, deliver, stop, timeout=1), 30)
    assert seen == [0, 2, 3], "in order, the refused one again, message_edited never asked for"
    polls = fake_max.requests("GET", "/updates")
    assert polls[0]["query"]["types"] == "message_created,message_callback,bot_started"


async def test_subscribe_uses_the_stored_secret(fake_max: FakeMax, tmp_path) -> None:
    from server.db.all_models import metadata
    from server.db.models import BotRow

    settings = Settings(database_url=f"sqlite+aiosqlite:///{tmp_path}/bots.db", max_api_url=fake_max.url)
    BOX.configure_from(settings)  # as settings_or_exit does for the command line: its secrets are sealed
    db = Database(settings.database_url)
    async with db.engine.begin() as conn:
        await conn.run_sync(metadata.create_all)
    async with db.session() as session:
        session.add(BotRow(id="shop", title="Shop", token=FAKE_TOKEN, webhook_secret="hook_secret-1"))
        session.add(BotRow(id="bare", title="No secret", token=FAKE_TOKEN))
        await session.commit()
    await db.dispose()

    subs = await subscribe(settings, "shop", "https://bots.example")
    assert [s["url"] for s in subs] == ["https://bots.example/webhooks/max/shop"]
    assert fake_max.subscriptions() == [{"url": "https://bots.example/webhooks/max/shop", "time": subs[0]["time"],
                                         "secret": "hook_secret-1", "update_types": list(HANDLED)}]
    with pytest.raises(CliError):
        await subscribe(settings, "bare", "https://bots.example")
    with pytest.raises(CliError):
        await subscribe(settings, "nobody", "https://bots.example")
    assert webhook_url("https://proxy.example/in/shop", "shop") == "https://proxy.example/in/shop"
    assert webhook_url("https://bots.example:443/", "shop") == "https://bots.example:443/webhooks/max/shop"


@pytest.mark.parametrize(("url", "why"), [
    ("http://bots.example", "it is not an https:// address"),
    ("https://bots.example:8443", "it uses port 8443"),
    ("https://203.0.113.7", "it names an IP address"),
    ("https://[2001:db8::1]/hook", "it names an IP address"),
])
def test_subscribe_refuses_an_address_max_refuses_saying_what_max_needs(url: str, why: str) -> None:
    with pytest.raises(CliError) as refused:
        webhook_url(url, "shop")
    assert why in str(refused.value) and "https:// address on port 443 at a host name" in str(refused.value)


async def test_poll_runs_updates_through_the_app_until_stopped(fake_max: FakeMax, tmp_path) -> None:
    from server.db.migrate import upgrade
    from server.db.models import BotRow, FlowRow, VersionRow

    document = (Path(__file__).resolve().parents[2] / "examples" / "registration.json").read_text("utf-8")
    settings = Settings(database_url=f"sqlite+aiosqlite:///{tmp_path}/poll.db", max_api_url=fake_max.url)
    BOX.configure_from(settings)  # as settings_or_exit does for the command line: its secrets are sealed
    await upgrade(settings.database_url)
    db = Database(settings.database_url)
    async with db.session() as session:
        session.add(FlowRow(id="registration", document=document, revision="r1", version_seq=1))
        await session.flush()
        session.add(VersionRow(flow_id="registration", number=1, document=document, hash="sha256:x", validation="{}"))
        session.add(BotRow(id="shop", token=FAKE_TOKEN, webhook_secret="hook_secret-1",
                           flow_id="registration", version=1))
        await session.commit()
    await db.dispose()
    user = {"user_id": 77, "first_name": "Ann", "is_bot": False}
    fake_max.push_update({"update_type": "bot_started", "chat_id": 1077, "user": user})
    fake_max.push_update({"update_type": "message_created", "message": {
        "sender": user, "recipient": {"chat_id": 1077, "chat_type": "dialog"}, "timestamp": 1,
        "body": {"mid": "mid.poll-1", "seq": 1, "text": "Иван Петров"}}})

    stop = asyncio.Event()
    polling = asyncio.create_task(poll(settings, "shop", stop))
    await fake_max.wait_for(lambda f: len(f.sent_messages(chat_id=1077)) >= 2, timeout=30)
    stop.set()
    await asyncio.wait_for(polling, 10)  # the stop cuts the 30 s long poll short
    assert [r["text"] for r in fake_max.sent_messages(chat_id=1077)] == ["Привет! Как вас зовут?", "Введите телефон в формате +7XXXXXXXXXX"]


def test_error_answers_are_judged_by_their_code_first() -> None:
    from server.channels.max.client import retryable

    assert retryable(400, "attachment.not.ready")  # MAX is still processing an upload: try again
    assert not retryable(503, "verify.token")  # a bad token stays bad whatever the status
    assert not retryable(400, "proto.payload") and not retryable(403, "chat.denied")
    assert retryable(429, "some.new.code") and retryable(502, "") and not retryable(404, "some.new.code")


async def test_request_buttons_become_max_request_contact_and_geo_location(client: MaxClient,
                                                                            fake_max: FakeMax) -> None:
    # Built from the neutral button dicts directly; the flow format's request buttons map to these.
    reply = Reply("Поделитесь контактом", [[{"text": "Отправить телефон", "request": "contact"}],
                                          [{"text": "Где вы?", "request": "location"}]])
    await client.send_message(FAKE_TOKEN, user_id=7, body=message_body(reply))
    [sent] = fake_max.sent_messages(user_id=7)
    assert sent["attachments"][0]["payload"]["buttons"] == [
        [{"type": "request_contact", "text": "Отправить телефон"}],
        [{"type": "request_geo_location", "text": "Где вы?"}]]


@pytest.mark.parametrize("body,outcome", [
    (b'{"message":{"body":{"mid":"m1","text":"hi"}}}', {}),
    (b'{"success":false,"message":"chat ' + KNOWN_TOKEN.encode() + b' is gone"}', "not.success"),
    (b'[1,2]', "bad.response"),
    (b'not json at all', "bad.response"),
], ids=["sent", "not-success", "not-an-object", "not-json"])
async def test_a_send_whose_answer_is_not_read_is_still_checked(body: bytes, outcome: object) -> None:
    from server.channels.transport import LeanClient

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        await reader.readexactly(int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0]))
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    lean = LeanClient(timeout=5)
    client = MaxClient(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}", rate=None, client=lean)  # type: ignore[arg-type]
    try:
        if isinstance(outcome, dict):
            assert await client.send_message(KNOWN_TOKEN, chat_id=1, body={"text": "hi"}, answer=False) == outcome
        else:
            with pytest.raises(MaxApiError) as refused:
                await client.send_message(KNOWN_TOKEN, chat_id=1, body={"text": "hi"}, answer=False)
            assert refused.value.code == outcome and not refused.value.retryable
            assert KNOWN_TOKEN not in str(refused.value)
    finally:
        await lean.aclose()
        server.close()


@pytest.mark.parametrize("lean", [False, True], ids=["httpx", "lean"])
async def test_a_429_carries_maxs_retry_after_to_the_sender(fake_max: FakeMax, lean: bool) -> None:  # noqa: F811
    from server.channels.transport import LeanClient

    fake_max.fail_next(1, 429, "/messages", retry_after=7)
    lean_client = LeanClient(timeout=5) if lean else None
    client = MaxClient(fake_max.url, rate=None, client=lean_client)  # type: ignore[arg-type]
    try:
        with pytest.raises(MaxApiError) as refused:
            await client.send_message(FAKE_TOKEN, chat_id=3, body=text_body("x"), answer=False)
    finally:
        await client.aclose()
        if lean_client is not None:
            await lean_client.aclose()
    assert (refused.value.status, refused.value.retryable, refused.value.retry_after) == (429, True, 7.0)


@pytest.mark.parametrize("header,seconds", [("7", 7.0), ("0.5", 0.5), (None, None), ("nan", None), ("inf", None),
                                            ("-3", None), ("Wed, 21 Oct 2026 07:28:00 GMT", None), ("1e9", 3600.0)])
def test_retry_after_is_read_as_bounded_seconds(header: str | None, seconds: float | None) -> None:
    from server.channels.max.client import _retry_after

    assert _retry_after(header) == seconds


async def test_the_bot_form_does_not_ask_max_to_deliver_to_an_address_it_refuses(fake_max: FakeMax) -> None:
    from server.db.models import BotRow
    from server.services.bots import subscribe_webhook

    row = BotRow(id="shop", title="shop", token=FAKE_TOKEN, webhook_secret="hook_secret-1")
    for public in ("http://bots.example", "https://bots.example:8443", "https://198.51.100.4"):
        answer = await subscribe_webhook(Settings(max_api_url=fake_max.url, public_url=public), row)
        assert answer is not None and answer["refused"] and not answer["subscribed"]
        assert "https:// address on port 443 at a host name" in answer["error"]
    assert fake_max.requests("POST", "/subscriptions") == []
    taken = await subscribe_webhook(Settings(max_api_url=fake_max.url, public_url="https://bots.example"), row)
    assert taken == {"url": "https://bots.example/webhooks/max/shop", "subscribed": True}
