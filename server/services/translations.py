"""A flow's translations: the table of the draft, one cell edited, and gettext (.po) files through Babel.

A .po file holds one language; each entry's msgid is the text's path, a line break, then the default
language's text (for choices, one per line), so a translator in Poedit or Weblate sees the source and
an import finds its place. An entry whose source text changed since the export is not imported.
"""
from __future__ import annotations

import io
from datetime import datetime, timezone
from typing import Any

from babel import Locale, UnknownLocaleError
from babel.messages.catalog import Catalog
from babel.messages.pofile import PoFileError, read_po, write_po
from sqlalchemy.ext.asyncio import AsyncSession

from flows.languages import listed
from flows.translations import rows, set_text
from server.errors import N_, NotFound, Unprocessable
from server.services import flows as flow_service

# A .po file of a flow's texts is small; this bounds what an upload may make the server read.
MAX_PO_BYTES = 2 * 1024 * 1024


def languages_of(document: dict[str, Any]) -> tuple[str, ...]:
    """The flow's languages; 422 with a sentence when it lists none."""
    codes = listed(document)
    if not codes:
        raise Unprocessable.worded(N_("This flow is in one language; list its languages (for example ru, en) in the"
                                      " flow settings first."), {}, code="no_languages")
    return codes


def _language(document: dict[str, Any], code: str, *, translated: bool = False) -> str:
    codes = languages_of(document)
    if code not in codes:
        raise NotFound.worded(N_("The flow has no language “%(code)s”; its languages are %(codes)s."),
                              {"code": code, "codes": ", ".join(codes)})
    if translated and code == codes[0]:
        raise Unprocessable.worded(N_("“%(code)s” is the flow's default language, the source of every translation;"
                                      " choose one of the others."), {"code": code}, code="default_language")
    return code


def table(document: dict[str, Any]) -> dict[str, Any]:
    """The translation table: languages (the default first) and one row per text."""
    codes = languages_of(document)
    return {"languages": list(codes), "default": codes[0],
            "rows": [{k: v for k, v in row.items() if k != "keys"} for row in rows(document)]}


def edit_cell(document: dict[str, Any], path: str, code: str, text: str) -> dict[str, Any]:
    """The document with one text of one language replaced; 404/422 with a sentence otherwise."""
    _language(document, code)
    try:
        return set_text(document, path, code, text)
    except KeyError:
        raise NotFound.worded(N_("This text is no longer in the flow (%(path)s); someone may have removed it."
                                 " Reload the page."), {"path": path}) from None
    except ValueError:
        raise Unprocessable.worded(N_("A choice input needs at least one choice in the default language, one per"
                                      " line."), {}, code="invalid_translation") from None


def msgid(path: str, source: str) -> str:
    """An entry's msgid: the path, a line break, the default language's text."""
    return f"{path}\n{source}"


def _locale(code: str) -> Locale | None:
    try:
        return Locale.parse(code)
    except (UnknownLocaleError, ValueError):
        return None


def export_po(document: dict[str, Any], code: str) -> bytes:
    """The .po file of language `code`: every text, its translation (empty when there is none)."""
    _language(document, code, translated=True)
    default = listed(document)[0]
    catalog = Catalog(locale=_locale(code), project=str(document.get("id", "")), version=str(document.get("title", "")),
                      creation_date=datetime.now(timezone.utc), fuzzy=False)
    for row in rows(document):
        source = row["texts"][default]
        if not source:
            continue
        where = f"state {row['state']}" if row["state"] else row["path"].split(".")[0]
        catalog.add(msgid(row["path"], source), row["texts"][code], auto_comments=[where])
    buffer = io.BytesIO()
    write_po(buffer, catalog, width=0, omit_header=False)
    return buffer.getvalue()


def import_po(document: dict[str, Any], code: str, data: bytes) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """The document with the .po file's translations of `code` put in, and what happened to each entry:
    `changed`, `stale` (the source text changed since the export), `unknown` (no such text now)."""
    _language(document, code, translated=True)
    if len(data) > MAX_PO_BYTES:
        raise Unprocessable.worded(N_("The file is over %(mb)s MB; a flow's translations are far smaller. Upload"
                                      " the .po file exported from this flow."), {"mb": MAX_PO_BYTES // (1024 * 1024)},
                                   code="too_large")
    try:
        catalog = read_po(io.BytesIO(data), locale=None, abort_invalid=True)
    except (PoFileError, ValueError, UnicodeDecodeError) as exc:
        raise Unprocessable.worded(N_("The file is not a readable gettext .po file (%(problem)s); upload the file"
                                      " exported here, edited in Poedit or Weblate."), {"problem": str(exc)[:200]},
                                   code="invalid_po") from None
    default = listed(document)[0]
    current = {row["path"]: row for row in rows(document)}
    report: dict[str, list[str]] = {"changed": [], "stale": [], "unknown": []}
    entries = [(m, m.id) for m in catalog if m.id and isinstance(m.id, str) and "\n" in m.id]
    if not entries:
        raise Unprocessable.worded(N_("The file holds no texts of a flow: its entries must be the ones exported"
                                      " here (each names a text's place and its source). Export the language,"
                                      " translate, upload it."), {}, code="invalid_po")
    for message, msgid in entries:
        text = message.string if isinstance(message.string, str) else ""
        if not text or message.fuzzy:
            continue  # untranslated or marked for review: nothing to take
        path, source = msgid.split("\n", 1)
        row = current.get(path)
        if row is None:
            report["unknown"].append(path)
        elif row["texts"][default] != source:
            report["stale"].append(path)
        elif row["texts"][code] != text:
            document = set_text(document, path, code, text)
            report["changed"].append(path)
    return document, report


async def import_into_draft(session: AsyncSession, flow_id: str, code: str, data: bytes,
                            actor: str | None) -> dict[str, Any]:
    """Import a .po file into the draft (saved at the revision it was read at) and say what changed."""
    document, revision = await flow_service.get_draft(session, flow_id)
    edited, report = import_po(document, code, data)
    if report["changed"]:
        revision = await flow_service.save_draft(session, flow_id, edited, [revision], actor)
    return {"language": code, "revision": revision, **report}
