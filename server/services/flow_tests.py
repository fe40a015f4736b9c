"""Saved tests of a flow: read, replace with a revision check, run on the draft or a version, gate publishes."""
from __future__ import annotations

import asyncio
import json
import secrets
from typing import Any

from sqlalchemy import update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from flows.model import Flow
from flows.testing.cases import BadTests, Case, parse_cases
from flows.testing.runner import run_cases
from server.db.changed import changed
from server.db.models import utcnow
from server.db.saved_tests import FlowTestsRow
from server.errors import N_, Conflict, NotFound, PreconditionFailed, Unprocessable
from server.services import audit
from server.services.flows import get_row as get_flow_row
from server.services.sandbox import source_flow

# The revision of a flow that has never had tests saved: what GET answers and the first PUT sends.
EMPTY_REVISION = "t0"


def new_revision(previous: str) -> str:
    """A counter people can read plus randomness, like draft revisions."""
    head = previous[1:].split("-", 1)[0] if previous[:1] == "t" else ""
    return f"t{int(head) + 1 if head.isdigit() else 1}-{secrets.token_hex(4)}"


def cases_of(raw: Any) -> list[Case]:
    """Parsed cases, or 422 with one detail per problem."""
    try:
        return parse_cases(raw)
    except BadTests as exc:
        raise Unprocessable(exc.message, code="invalid_tests", details=exc.details) from None


async def get_tests(session: AsyncSession, flow_id: str) -> tuple[list[dict[str, Any]], str]:
    """The saved tests (a list, maybe empty) and their revision."""
    await get_flow_row(session, flow_id)
    row = await session.get(FlowTestsRow, flow_id)
    if row is None:
        return [], EMPTY_REVISION
    return json.loads(row.document)["tests"], row.revision


async def save_tests(session: AsyncSession, flow_id: str, raw: Any, if_match: list[str] | None,
                     actor: str | None) -> str:
    """Replace the list if its revision is one of `if_match` (None: any); returns the new revision."""
    await get_flow_row(session, flow_id)
    cases = cases_of(raw)
    text = json.dumps({"tests": [c.to_dict() for c in cases]}, ensure_ascii=False)
    row = await session.get(FlowTestsRow, flow_id)
    previous = row.revision if row is not None else EMPTY_REVISION
    if if_match is not None and previous not in if_match:
        raise PreconditionFailed(f"The tests changed since revision {', '.join(if_match) or '(none)'}; they are "
                                 f"now {previous}. Reload them, reapply your change and send the new revision "
                                 "in If-Match.")
    revision = new_revision(previous)
    if row is None:
        session.add(FlowTestsRow(flow_id=flow_id, document=text, revision=revision, updated_at=utcnow(),
                                 updated_by=actor))
    else:
        # The revision is the UPDATE's own WHERE: of two saves from one revision exactly one wins.
        result = await session.execute(
            update(FlowTestsRow).where(FlowTestsRow.flow_id == flow_id, FlowTestsRow.revision == previous)
            .values(document=text, revision=revision, updated_at=utcnow(), updated_by=actor)
            .execution_options(synchronize_session=False))
        if changed(result) != 1:
            await session.rollback()
            raise PreconditionFailed("The tests were changed by someone else meanwhile; reload them and retry.")
    audit.record(session, actor, "flow.tests.save", f"flow:{flow_id}", revision=revision, tests=len(cases))
    try:
        await session.commit()
    except IntegrityError:  # two first saves at once
        await session.rollback()
        raise PreconditionFailed("The tests were saved by someone else meanwhile; reload them and retry.") \
            from None
    return revision


def source_name(source: Any) -> str:
    return "draft" if source in (None, "draft") else f"version {source}"


async def saved_cases(session: AsyncSession, flow_id: str, source: Any) -> tuple[Flow, list[Case], str]:
    """The draft or a version, with the saved tests to run on it and their revision."""
    flow = await source_flow(session, flow_id, source)
    tests, revision = await get_tests(session, flow_id)
    return flow, cases_of(tests), revision


async def run_saved(session: AsyncSession, flow_id: str, source: Any,
                    names: list[str] | None = None) -> dict[str, Any]:
    """Run the saved tests (all, or those named) on the draft or a version."""
    flow, cases, revision = await saved_cases(session, flow_id, source)
    if names is not None:
        unknown = sorted(set(names) - {c.name for c in cases})
        if unknown:
            raise Unprocessable(f"There is no saved test named {unknown[0]!r}.", code="unknown_test",
                                details=[{"path": "tests", "message": f"unknown test {n!r}"} for n in unknown])
        cases = [c for c in cases if c.name in names]
    # Off the event loop: hundreds of tests are seconds of engine work, and other requests must not wait.
    report = await asyncio.to_thread(run_cases, flow, cases)
    return {"source": "draft" if source in (None, "draft") else source, "revision": revision, **report}


def failing_details(report: dict[str, Any]) -> list[dict[str, Any]]:
    """One detail per failing test: its name, the step and what differs."""
    out = []
    for r in report["results"]:
        if r["passed"]:
            continue
        f = r["failure"] or {}
        if r.get("error"):
            said = r["error"]
        else:
            said = f"step {f['step'] + 1} ({f['shown']}): " + "; ".join(
                f"{key} expected {json.dumps(f['expected'].get(key), ensure_ascii=False)}, got "
                f"{json.dumps(f['actual'].get(key), ensure_ascii=False)}" for key in f["differs"])
        out.append({"path": r["name"], "message": said[:1000], "test": r["name"], "step": f.get("step"),
                    "shown": f.get("shown"),
                    "differs": f.get("differs", []), "expected": f.get("expected"), "actual": f.get("actual"),
                    "error": r.get("error")})
    return out


async def check_publish(session: AsyncSession, flow_id: str, version: int) -> dict[str, Any]:
    """For a bot that requires tests: run them on the version; 409 naming the failing tests if any fail."""
    report = await run_saved(session, flow_id, version)
    # The flow is named by its title, as the person publishing knows it.
    title = (await get_flow_row(session, flow_id)).title or flow_id
    if report["total"] == 0:
        raise Conflict.worded(N_("This bot publishes only versions whose saved tests pass, and flow '%(flow)s' "
                                 "has no saved tests; save at least one test, or stop requiring passing tests in "
                                 "the bot's settings."), {"flow": title}, code="no_tests")
    if report["failed"]:
        failing = failing_details(report)
        names = ", ".join(repr(d["test"]) for d in failing[:5])
        raise Conflict.worded(
            N_("Version %(version)s of '%(flow)s' fails %(failed)s of %(total)s saved tests (%(names)s); nothing "
               "was published. Fix the flow or the tests, or stop requiring passing tests in the bot's settings."),
            {"version": version, "flow": title, "failed": report["failed"], "total": report["total"],
             "names": names}, code="tests_failed", details=failing)
    return report


async def generated(session: AsyncSession, flow_id: str, source: Any) -> dict[str, Any]:
    """Generated cases for the draft or a version (not saved: the editor offers to add them)."""
    from flows.testing.generate import generate

    flow = await source_flow(session, flow_id, source)
    return {"source": "draft" if source in (None, "draft") else source, **await asyncio.to_thread(generate, flow)}


async def add_generated(session: AsyncSession, flow_id: str, source: Any, if_match: list[str] | None,
                        actor: str | None) -> dict[str, Any]:
    """Generate on the server and append the cases not saved yet (by name): a large flow's generated
    tests need not travel to the browser and back."""
    from flows.testing.generate import generate

    flow = await source_flow(session, flow_id, source)
    tests, revision = await get_tests(session, flow_id)
    if if_match is not None and revision not in if_match:
        raise PreconditionFailed(f"The tests changed since revision {', '.join(if_match) or '(none)'}; they are "
                                 f"now {revision}. Reload them and generate again.")
    names = {t["name"] for t in tests}
    fresh = [t for t in (await asyncio.to_thread(generate, flow))["tests"] if t["name"] not in names]
    new = await save_tests(session, flow_id, tests + fresh, [revision], actor)
    return {"id": flow_id, "revision": new, "added": len(fresh), "tests": len(tests) + len(fresh)}


async def append_test(session: AsyncSession, flow_id: str, raw: Any, if_match: list[str] | None,
                      actor: str | None) -> str:
    """Add one test to the list (its name must be new); the list itself need not be sent."""
    tests, revision = await get_tests(session, flow_id)
    if if_match is not None and revision not in if_match:
        raise PreconditionFailed(f"The tests changed since revision {', '.join(if_match) or '(none)'}; they are "
                                 f"now {revision}. Reload them and try again.")
    return await save_tests(session, flow_id, tests + [raw], [revision], actor)


async def remove_test(session: AsyncSession, flow_id: str, name: str, if_match: list[str] | None,
                      actor: str | None) -> str:
    """Drop the test with this name; 404 when there is none."""
    tests, revision = await get_tests(session, flow_id)
    if if_match is not None and revision not in if_match:
        raise PreconditionFailed(f"The tests changed since revision {', '.join(if_match) or '(none)'}; they are "
                                 f"now {revision}. Reload them and try again.")
    kept = [t for t in tests if t.get("name") != name]
    if len(kept) == len(tests):
        raise NotFound(f"There is no saved test named {name!r}.")
    return await save_tests(session, flow_id, kept, [revision], actor)
