"""One side-panel field edit: the form's answer (saved draft + issues pane) against the two requests it replaces.

Before, a field edit cost the form post, then a GET of the draft and a GET of the validation. Now the post's
answer carries both. This times, in-process (no network, so the saved round trips come on top), the post with
its answer and the two follow-up requests it made unnecessary, on a generated flow.

    python bench/form_edit.py [--states 300 1000] [--rounds 7]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from litestar.testing import TestClient  # noqa: E402

from bench.editor import generated_flow  # noqa: E402
from server.app import create_app  # noqa: E402
from server.settings import Settings  # noqa: E402
from tests.integration.test_pages_language import form_of  # noqa: E402

TOKEN = "bench-form-token"


def measure(states: int, rounds: int) -> dict[str, float]:
    folder = tempfile.mkdtemp(prefix="botflow-form-")
    app = create_app(Settings(database_url=f"sqlite+aiosqlite:///{folder}/bench.db", bootstrap_token=TOKEN,
                              secret_key="bench-secret"))
    headers = {"Authorization": f"Bearer {TOKEN}"}
    posts, follow_ups, sizes = [], [], []
    with TestClient(app) as client:
        created = client.post("/api/flows", json=generated_flow(states), headers=headers)
        assert created.status_code == 201, created.text
        revision = created.headers["ETag"].strip('"')
        for n in range(rounds):
            form = client.get("/flows/bench/edit/state/s0005", headers={**headers, "HX-Request": "true"})
            fields = form_of(form.text)
            fields.update(title=[f"Question five, take {n}"])
            csrf = client.cookies.get("csrftoken", "")
            started = time.perf_counter()
            answer = client.post("/flows/bench/edit/state/s0005", data=fields,
                                 headers={**headers, "HX-Request": "true", "X-CSRFToken": csrf,
                                          "If-Match": f'"{revision}"'})
            posts.append(time.perf_counter() - started)
            assert answer.status_code == 200 and "X-Botflow-Revision" in answer.headers, answer.text[:300]
            revision = answer.headers["X-Botflow-Revision"]
            sizes.append(len(answer.content))
            started = time.perf_counter()
            client.get("/api/flows/bench", headers=headers)
            client.get("/api/flows/bench/validation", headers=headers)
            follow_ups.append(time.perf_counter() - started)
    return {"post_ms": statistics.median(posts) * 1000, "replaced_gets_ms": statistics.median(follow_ups) * 1000,
            "answer_kib": statistics.median(sizes) / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--states", type=int, nargs="+", default=[300, 1000])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    for states in args.states:
        r = measure(states, args.rounds)
        print(f"{states} states: form post with its answer {r['post_ms']:.0f} ms (median of {args.rounds}, "
              f"{r['answer_kib']:.0f} KiB); the GET draft + GET validation it replaces {r['replaced_gets_ms']:.0f} ms "
              f"plus two network round trips; requests per field edit 1 (was 3)")


if __name__ == "__main__":
    main()
