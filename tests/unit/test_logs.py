"""Log lines: JSON with the structured fields, users hashed, texts only at DEBUG, no secret ever."""
from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from server.logs import configure

KEY = "the-deployment-secret-key"
BOOT = "bootstrap-token-value-123"


@pytest.fixture
def output() -> Iterator[io.StringIO]:
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    stream = io.StringIO()
    configure("json", KEY, [BOOT, None], stream=stream)
    yield stream
    root.handlers[:] = saved[0]
    root.setLevel(saved[1])


def lines(stream: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_one_json_object_per_line_with_the_turn_fields(output: io.StringIO) -> None:
    logging.getLogger("botflow.runtime").info(
        "turn for %s done", "bot1",
        extra={"event": "turn", "bot": "bot1", "flow": "registration", "version": 3, "outcome": "fired",
               "duration": 0.0042, "request_id": "r-1", "user": 212843158, "text": "Иван, +79991234567"})
    [line] = lines(output)
    assert line["level"] == "info" and line["logger"] == "botflow.runtime" and line["event"] == "turn"
    assert line["message"] == "turn for bot1 done" and line["time"].endswith("+00:00")
    assert {k: line[k] for k in ("bot", "flow", "version", "outcome", "duration", "request_id")} == {
        "bot": "bot1", "flow": "registration", "version": 3, "outcome": "fired", "duration": 0.0042,
        "request_id": "r-1"}
    assert "212843158" not in output.getvalue() and len(line["user"]) == 12
    assert "text" not in line and "Иван" not in output.getvalue()


def test_the_same_user_hashes_the_same_and_texts_show_at_debug(output: io.StringIO) -> None:
    logging.getLogger().setLevel(logging.DEBUG)
    log = logging.getLogger("botflow.runtime")
    log.debug("in", extra={"user": "42", "text": "hello"})
    log.info("out", extra={"user": 42})
    first, second = lines(output)
    assert first["user"] == second["user"] and first["text"] == "hello"


def test_secrets_are_masked_wherever_they_appear(output: io.StringIO) -> None:
    log = logging.getLogger("botflow.test")
    log.warning("call failed: Authorization: Bearer abc.def-ghi sent to https://x/messages?access_token=tok123&a=1")
    log.warning("settings %s and %s", KEY, BOOT)
    log.warning('body {"token": "max-token-1", "webhook_secret": "hk-value-9"} url postgresql://u:pw@db/x')
    try:
        raise RuntimeError(f"boom with {BOOT}")
    except RuntimeError:
        log.exception("failed")
    text = output.getvalue()
    for secret in ("abc.def-ghi", "tok123", KEY, BOOT, "max-token-1", "hk-value-9", ":pw@"):
        assert secret not in text, secret
    assert text.count("***") >= 7
    assert "RuntimeError" in lines(output)[-1]["message"]


def test_text_format_is_one_readable_line(output: io.StringIO) -> None:
    stream = io.StringIO()
    configure("text", KEY, [], stream=stream)
    logging.getLogger("botflow.db").warning("waiting for the database", extra={"bot": "b", "user": 7})
    [line] = stream.getvalue().splitlines()
    assert "WARNING" in line and "botflow.db: waiting for the database" in line and "bot=b" in line
    assert "user=" in line and " 7" not in line.split("[")[1]


async def test_lines_logged_while_serving_a_request_carry_its_id(output: io.StringIO) -> None:
    from server.logs import RequestIds

    async def inner(scope, receive, send) -> None:
        logging.getLogger("botflow.api").warning("inside")

    wrapped = RequestIds(inner)
    await wrapped({"type": "http", "headers": [(b"x-request-id", b"abc-123")]}, None, None)
    await wrapped({"type": "http", "headers": [(b"x-request-id", b"bad id\r\nx")]}, None, None)
    logging.getLogger("botflow.api").warning("outside")
    given, generated, outside = lines(output)
    assert given["request_id"] == "abc-123"
    assert len(generated["request_id"]) == 12 and "bad" not in generated["request_id"]
    assert "request_id" not in outside
