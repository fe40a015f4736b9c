"""The design pool: designer CPU work runs in other processes, bounded, and its errors come back whole."""
from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from flows.errors import FlowFormatError
from server.design_pool import DesignBusy, DesignPool
from server.errors import Unprocessable
from server.services import design_work
from server.services.design_work import Checked


def wait_for_file(path: str) -> int:
    """A job that holds its worker until `path` exists; answers the worker's pid."""
    deadline = time.monotonic() + 30
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.02)
    return os.getpid()


async def test_jobs_run_in_another_process_at_a_lower_priority():
    pool = DesignPool(workers=1, queue=0)
    try:
        assert await pool.run(os.getpid) != os.getpid()
        assert await pool.run(os.nice, 0) > os.nice(0)
    finally:
        pool.shutdown()


async def test_a_full_pool_refuses_with_503_and_recovers(tmp_path: Path):
    pool = DesignPool(workers=1, queue=1)
    gate = str(tmp_path / "go")
    try:
        running = asyncio.ensure_future(pool.run(wait_for_file, gate))
        waiting = asyncio.ensure_future(pool.run(wait_for_file, gate))
        await asyncio.sleep(0)
        with pytest.raises(DesignBusy) as refused:
            await pool.run(os.getpid)
        assert refused.value.status == 503 and refused.value.headers["Retry-After"]
        assert "try again" in refused.value.message
        Path(gate).touch()
        await asyncio.gather(running, waiting)
        assert pool.jobs == 0
        assert await pool.run(os.getpid) != os.getpid()
    finally:
        pool.shutdown()


async def test_a_caller_that_leaves_keeps_its_slot_until_the_job_ends(tmp_path: Path):
    pool = DesignPool(workers=1, queue=0)
    gate = str(tmp_path / "go")
    try:
        job = asyncio.ensure_future(pool.run(wait_for_file, gate))
        await asyncio.sleep(0)
        job.cancel()  # the browser went away; the worker is still busy
        with pytest.raises(DesignBusy):
            await pool.run(os.getpid)
        Path(gate).touch()
        for _ in range(500):
            if pool.jobs == 0:
                break
            await asyncio.sleep(0.01)
        assert await pool.run(os.getpid) != os.getpid()
    finally:
        pool.shutdown()


async def test_errors_cross_the_process_boundary_whole():
    pool = DesignPool(workers=1, queue=0)
    try:
        with pytest.raises(FlowFormatError) as bad:
            await pool.run(design_work.checked, {"format": "botflow/v1", "id": "x", "states": [{"id": 5}]}, ())
        assert bad.value.details and bad.value.details[0]["path"].startswith("states[0]")
        with pytest.raises(Unprocessable) as unreadable:
            await pool.run(design_work.checked, design_work.RawDocument(b"{nope", "json"), ())
        assert unreadable.value.status == 422 and unreadable.value.code == "invalid_json"
        good = await pool.run(design_work.checked, {"format": "botflow/v1", "id": "ok", "title": "T",
                                                     "states": [{"id": "a", "final": True}], "start": "a"}, ())
        assert good == Checked("ok", "T", good.text) and '"start": "a"' in good.text
    finally:
        pool.shutdown()


async def test_without_workers_the_work_runs_inline():
    pool = DesignPool(workers=0, queue=0)
    assert await pool.run(os.getpid) == os.getpid()
