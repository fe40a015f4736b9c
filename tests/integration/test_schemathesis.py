"""A bounded schemathesis run over /schema/openapi.json against the real server: no 500s, answers as documented."""
from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import yaml
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import response_schema_conformance

from server.channels.max.fake import FakeMax
from tests.processes import free_port, stop, wait_answering

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "bf-fuzz-" + secrets.token_hex(16)
# Examples per operation: about 40 operations, so a run stays well under two minutes on a busy machine.
EXAMPLES = int(os.environ.get("BOTFLOW_FUZZ_EXAMPLES", "15"))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`botflow` under uvicorn on its own SQLite file, with the bootstrap admin token and a fake MAX."""
    folder = tmp_path_factory.mktemp("fuzz")
    port = free_port()
    with FakeMax(tokens={"fuzz-max-token"}) as fake:
        env = {k: v for k, v in os.environ.items() if not k.startswith("BOTFLOW_")}
        env.update({"BOTFLOW_DATABASE_URL": f"sqlite+aiosqlite:///{folder / 'botflow.db'}",
                    "BOTFLOW_BOOTSTRAP_TOKEN": TOKEN, "BOTFLOW_SECRET_KEY": secrets.token_hex(32),
                    "BOTFLOW_MAX_API_URL": fake.url})
        log = open(folder / "server.log", "w")
        proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "--factory", "server.app:create_app",
                                 "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning"],
                                cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        try:
            wait_answering(url + "/healthz", proc, 60, folder / "server.log")
            seed = httpx.post(url + "/api/flows", headers={"Authorization": f"Bearer {TOKEN}"},
                              content=(ROOT / "examples" / "registration.json").read_bytes(),
                              timeout=10).status_code
            assert seed == 201
            yield url
        finally:
            stop(proc)
            log.close()


@pytest.fixture(scope="module")
def api_schema(server: str):
    # Revoking tokens by guessed id would sooner or later revoke the run's own token (covered in test_accounts).
    return schemathesis.openapi.from_url(server + "/schema/openapi.json").exclude(
        path_regex=r"/tokens/\{token_id\}$", method="DELETE")


@pytest.fixture(scope="module")
def tally() -> Iterator[Counter]:
    """Answers per status class over the run, printed at the end (run with -s to see it)."""
    counts: Counter = Counter()
    yield counts
    print(f"\nschemathesis: {sum(counts.values())} cases, " + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
def test_the_api_answers_as_documented(case, server: str, tally: Counter) -> None:
    response = case.call(base_url=server, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
    tally[f"{response.status_code // 100}xx"] += 1
    case.validate_response(response, checks=[not_a_server_error, response_schema_conformance])


def test_the_document_describes_bodies_and_the_error_shape(server: str) -> None:
    doc = httpx.get(server + "/schema/openapi.json", timeout=10).json()
    error = doc["components"]["schemas"]["Error"]
    assert error["required"] == ["error", "message", "details"]
    users = doc["paths"]["/api/users"]["post"]
    body = users["requestBody"]["content"]["application/json"]["schema"]
    assert body["required"] == ["username", "role"] and body["properties"]["password"]["type"] == ["string", "null"]
    assert set(doc["paths"]["/api/flows"]["post"]["requestBody"]["content"]) == {"application/json", "application/yaml"}
    for path, item in doc["paths"].items():
        for operation in item.values():
            assert operation["responses"]["4XX"]["content"]["application/json"]["schema"] == {
                "$ref": "#/components/schemas/Error"}
            assert (operation.get("security") == [{"bearer": []}]) == path.startswith("/api/"), path
    assert doc["components"]["securitySchemes"]["bearer"] == {
        "type": "http", "scheme": "bearer", "description": "An API token: Authorization: Bearer <token>."}
    as_yaml = httpx.get(server + "/schema/openapi.yaml", timeout=10)
    assert as_yaml.status_code == 200 and yaml.safe_load(as_yaml.text) == doc
