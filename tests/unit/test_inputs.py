"""Input types: what is accepted and the value that gets saved."""
from __future__ import annotations

import pytest

from flows.inputs import check
from flows.model import Input


def ok(inp: Input, text, attachments=None):
    verdict = check(inp, text, attachments)
    assert verdict.ok, verdict.why
    return verdict.value


def bad(inp: Input, text, attachments=None) -> None:
    verdict = check(inp, text, attachments)
    assert not verdict.ok, verdict.value
    assert verdict.why


def test_text_is_trimmed_and_lengths_count_trimmed_text():
    inp = Input("text", min_length=2, max_length=4)
    assert ok(inp, "  ab  ") == "ab"
    assert ok(inp, "abcd") == "abcd"
    bad(inp, " a ")
    bad(inp, "abcde")


def test_text_without_limits_and_empty_text():
    assert ok(Input("text"), "x") == "x"
    bad(Input("text"), "   ")
    bad(Input("text"), None)


@pytest.mark.parametrize("raw", ["+79991234567", "89991234567", "79991234567", "+7 (999) 123-45-67",
                                 "8-999-123-45-67", " 8 999 123 45 67 ", "+8 999 1234567",
                                 "8 (999) 123–45–67", "+7\t999\u00a01234567"])
def test_phone_accepted_and_normalised(raw):
    assert ok(Input("phone"), raw) == "+79991234567"


@pytest.mark.parametrize("raw", ["не телефон", "+7999123456", "+799912345678", "+19991234567", "9991234567",
                                 "+7.999.123.45.67", "+7999123456a", "++79991234567", "٨٩٩٩١٢٣٤٥٦٧"])
def test_phone_rejected(raw):
    bad(Input("phone"), raw)


@pytest.mark.parametrize("raw", ["a@b.ru", "ivan.petrov+tag@mail-box.example.com", "Имя@почта.рф", "a_b@c.d"])
def test_email_accepted_as_written(raw):
    assert ok(Input("email"), f"  {raw} ") == raw


@pytest.mark.parametrize("raw", ["a@b", "@b.ru", "a b@c.ru", "a@b.ru x", "a@@b.ru", "ab.ru"])
def test_email_rejected(raw):
    bad(Input("email"), raw)


@pytest.mark.parametrize("raw,value", [("5", 5), ("-5", -5), ("+5", 5), ("12,5", 12.5), ("12.5", 12.5),
                                       ("3.0", 3), ("0,00", 0), ("007", 7),
                                       ("123456789012345678901234567890", 123456789012345678901234567890)])
def test_number_accepts_decimal_comma_and_saves_whole_numbers_as_int(raw, value):
    saved = ok(Input("number"), raw)
    assert saved == value
    assert type(saved) is type(value)


def test_number_with_a_fraction_is_never_saved_as_an_integer():
    # Far past float precision the float is whole, but the text is not: it stays a (rounded) float.
    saved = ok(Input("number"), "12345678901234567.5")
    assert type(saved) is float and saved == 12345678901234567.5
    assert ok(Input("number"), "12345678901234567,000") == 12345678901234567


@pytest.mark.parametrize("raw", ["1e5", "1.", ".5", "1 000", "1,2,3", "abc", "½", "١٢"])
def test_number_rejected(raw):
    bad(Input("number"), raw)


def test_number_bounds_are_inclusive():
    inp = Input("number", min=1, max=10.5)
    assert ok(inp, "1") == 1
    assert ok(inp, "10,5") == 10.5
    bad(inp, "0,99")
    bad(inp, "10.51")


def test_integer_accepts_signs_and_bounds_are_inclusive():
    inp = Input("integer", min=-2, max=3)
    assert ok(inp, "-2") == -2
    assert ok(inp, "+3") == 3
    bad(inp, "4")
    bad(inp, "-3")
    bad(Input("integer"), "2.0")
    bad(Input("integer"), "2,5")


def test_choice_is_case_insensitive_and_saves_the_entry_as_written():
    inp = Input("choice", choices=("Москва", "Санкт-Петербург"))
    assert ok(inp, " москва ") == "Москва"
    assert ok(inp, "САНКТ-ПЕТЕРБУРГ") == "Санкт-Петербург"
    bad(inp, "Казань")


def test_regex_is_searched_not_anchored_and_case_sensitive():
    assert ok(Input("regex", pattern=r"\d{3}"), " код 123 ") == "код 123"
    bad(Input("regex", pattern=r"^\d{3}$"), "код 123")
    bad(Input("regex", pattern="abc"), "ABC")


@pytest.mark.parametrize("raw,iso", [("31.12.2024", "2024-12-31"), ("29.02.2024", "2024-02-29"),
                                     ("2024-01-05", "2024-01-05")])
def test_date_saved_as_iso(raw, iso):
    assert ok(Input("date"), raw) == iso


@pytest.mark.parametrize("raw", ["29.02.2023", "31.04.2024", "2024-13-01", "1.1.2024", "2024/01/05",
                                 "05.01.24", "2024-1-5", "00.01.2024", "завтра"])
def test_date_rejected(raw):
    bad(Input("date"), raw)


IMAGE = {"type": "image", "payload": {"url": "https://x/a.png"}}
FILE = {"type": "file", "payload": {"url": "https://x/a.pdf"}}
CONTACT = {"type": "contact", "payload": {"vcf_info": "BEGIN:VCARD"}}
LOCATION = {"type": "location", "latitude": 1.0, "longitude": 2.0}


def test_attachment_saves_the_first_matching_attachment():
    assert ok(Input("attachment"), None, [FILE, IMAGE]) == FILE
    assert ok(Input("attachment", kinds=("image",)), "подпись", [FILE, IMAGE]) == IMAGE
    bad(Input("attachment", kinds=("image",)), None, [FILE])
    bad(Input("attachment"), "только текст")


def test_contact_and_location():
    assert ok(Input("contact"), None, [IMAGE, CONTACT]) == CONTACT
    bad(Input("contact"), "+79991234567")
    assert ok(Input("location"), None, [LOCATION]) == LOCATION
    bad(Input("location"), None, [CONTACT])


def test_any_saves_trimmed_text_else_first_attachment():
    assert ok(Input("any"), "  привет ") == "привет"
    assert ok(Input("any"), "подпись", [IMAGE]) == "подпись"
    assert ok(Input("any"), None, [FILE, IMAGE]) == FILE
    assert ok(Input("any"), "  ", [IMAGE]) == IMAGE
    bad(Input("any"), None, [])


def test_caption_sent_to_a_text_like_input_is_the_value():
    assert ok(Input("phone"), "+79991234567", [IMAGE]) == "+79991234567"
    assert ok(Input("text"), " подпись ", [IMAGE]) == "подпись"


def test_text_like_input_with_only_an_attachment_is_the_wrong_kind():
    verdict = check(Input("email"), None, [IMAGE])
    assert not verdict.ok
    assert "no text" in verdict.why
