"""The deployment files, checked without Docker: compose profiles, the image recipe, its CI workflow, the
Caddy configuration and .env.example against the settings the server really reads."""
from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from server.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text(encoding="utf-8"))
SERVICES = COMPOSE["services"]


def env_example() -> dict[str, str]:
    values = {}
    for line in (ROOT / ".env.example").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            key, sep, value = line.partition("=")
            assert sep and key == key.strip() and re.fullmatch(r"[A-Z_]+", key), line
            assert key not in values, f"{key} twice in .env.example"
            values[key] = value
    return values


def setting_variables() -> dict[str, str]:
    """BOTFLOW_<FIELD> for every Settings field the environment sets."""
    return {f"BOTFLOW_{f.name.upper()}": f.name for f in dataclasses.fields(Settings)
            if f.name != "secret_key_generated"}


def test_env_example_lists_every_setting_with_its_default() -> None:
    example = env_example()
    defaults = Settings.from_env({})
    for variable, name in setting_variables().items():
        assert variable in example, f".env.example lacks {variable}"
        if name == "secret_key":
            assert example[variable] == "", "a secret key in the example would be shared by everyone who copies it"
            continue
        given = Settings.from_env({variable: example[variable]})
        assert getattr(given, name) == getattr(defaults, name), f"{variable}={example[variable]} is not its default"


def test_env_example_names_every_variable_the_code_and_compose_read() -> None:
    example = env_example()
    read_in_code = set()
    for path in [*(ROOT / "server").rglob("*.py"), *(ROOT / "web").rglob("*.py")]:
        read_in_code |= set(re.findall(r"""environ\.get\(\s*["'](BOTFLOW_[A-Z_]+)""", path.read_text(encoding="utf-8")))
        read_in_code |= set(re.findall(r"""get\(\s*["'](BOTFLOW_[A-Z_]+)["']\s*\)""", path.read_text(encoding="utf-8")))
    assert {"BOTFLOW_REDIS_PREFIX", "BOTFLOW_DATABASE_URL"} <= read_in_code
    in_compose = set(re.findall(r"\$\{(BOTFLOW_[A-Z_]+)", (ROOT / "docker-compose.yml").read_text(encoding="utf-8")))
    assert "BOTFLOW_DOMAIN" in in_compose
    assert (read_in_code | in_compose) - set(example) == set()
    assert set(example) - read_in_code - in_compose == set(), "variables nothing reads"


def test_the_default_profile_publishes_no_database_or_redis_port() -> None:
    for name in ("postgres", "redis"):
        assert "profiles" not in SERVICES[name], name
        assert "ports" not in SERVICES[name], f"{name} is reachable from outside the compose network"
    local = yaml.safe_load((ROOT / "deploy" / "compose.ports.yml").read_text(encoding="utf-8"))["services"]
    for name, service in local.items():
        assert name in SERVICES
        assert all(port.startswith("127.0.0.1:") for port in service["ports"]), "development ports stay on loopback"


def test_the_production_profile_is_https_through_caddy_with_one_domain() -> None:
    production = {name for name, s in SERVICES.items() if "production" in s.get("profiles", [])}
    assert production == {"migrate", "app", "proxy"}
    proxy, app = SERVICES["proxy"], SERVICES["app"]
    assert {"80:80", "443:443"} <= set(proxy["ports"])
    assert "ports" not in app and "ports" not in SERVICES["migrate"]
    assert proxy["image"].startswith("caddy:")
    mounts = {volume.split(":")[1]: volume.split(":")[0] for volume in proxy["volumes"]}
    assert mounts["/etc/caddy/Caddyfile"] == "./deploy/Caddyfile" and (ROOT / "deploy" / "Caddyfile").exists()
    assert mounts["/data"] in COMPOSE["volumes"], "certificates must outlive the container"
    domain = proxy["environment"]["BOTFLOW_DOMAIN"]
    assert app["environment"]["BOTFLOW_PUBLIC_URL"] == f"https://{domain}"
    assert app["environment"] is SERVICES["migrate"]["environment"], "one environment for every Botflow process"
    assert "BOTFLOW_SECRET_KEY" in app["environment"]
    for name, service in SERVICES.items():
        for needed in service.get("depends_on", {}):
            assert needed in SERVICES, (name, needed)
    assert app["image"] == SERVICES["migrate"]["image"] and app["build"] == SERVICES["migrate"]["build"] == "."


def test_caddy_reads_the_configuration_as_meant() -> None:
    caddy = shutil.which("caddy")
    if caddy is None:
        pytest.fail("caddy is not installed (tests/run.sh installs it: apt-get install caddy)")
    answer = subprocess.run([caddy, "adapt", "--config", str(ROOT / "deploy" / "Caddyfile"), "--adapter", "caddyfile"],
                            env={"BOTFLOW_DOMAIN": "bots.example.com", "BOTFLOW_CADDY_OPTIONS": "",
                                 "PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=30)
    assert answer.returncode == 0, answer.stderr
    config = json.loads(answer.stdout)
    server = config["apps"]["http"]["servers"]["srv0"]
    assert server["listen"] == [":443"]
    route = server["routes"][0]
    assert route["match"] == [{"host": ["bots.example.com"]}]
    text = json.dumps(route)
    assert '"zstd"' in text and '"gzip"' in text
    assert '"dynamic_upstreams": {"name": "app", "port": "8000"' in text
    assert "tls" not in config or "internal" not in json.dumps(config["tls"]), "a public CA unless told otherwise"


def test_the_image_is_multi_stage_non_root_and_carries_only_the_package() -> None:
    text = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    instructions = [line.split()[0] for line in text.splitlines() if line and not line[0].isspace()
                    and not line.startswith("#")]
    assert instructions.count("FROM") == 2
    final = text[text.rindex("\nFROM "):]
    assert re.search(r"^USER (?!root|0\b)\w+", final, re.M), "the server must not run as root"
    assert "HEALTHCHECK" in final and "/healthz" in final
    for label in ("org.opencontainers.image.version", "org.opencontainers.image.source",
                  "org.opencontainers.image.licenses=\"Apache-2.0\""):
        assert label in final, label
    assert "COPY . ." not in text and "COPY --from" not in final, "the runtime stage gets installed wheels only"
    copied = set(re.findall(r"^COPY (\w+) \1$", text, re.M))
    assert copied == {"static", "flows", "server", "web"}
    assert "--require-hashes" in text


def test_the_docker_context_leaves_out_local_state_and_development_files() -> None:
    ignored = set((ROOT / ".dockerignore").read_text(encoding="utf-8").split())
    for pattern in (".venv", "*.db-wal", "*.db-shm", "tests", "bench", ".ci", ".git", ".env"):
        assert pattern in ignored, pattern


def test_the_release_workflow_builds_and_tags_the_image() -> None:
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "image.yml").read_text(encoding="utf-8"))
    triggers = workflow[True] if True in workflow else workflow["on"]  # YAML 1.1 reads a bare `on` as true
    assert "release" in triggers
    steps = [step for job in workflow["jobs"].values() for step in job["steps"]]
    uses = [step.get("uses", "") for step in steps]
    assert any(u.startswith("docker/build-push-action@") for u in uses)
    assert any(u.startswith("docker/metadata-action@") for u in uses)
    build = next(step for step in steps if step.get("uses", "").startswith("docker/build-push-action@"))
    assert "VERSION=" in build["with"]["build-args"] and "SOURCE=" in build["with"]["build-args"]


def test_the_licence_is_apache_and_named_in_the_package() -> None:
    assert "Apache License" in (ROOT / "LICENSE").read_text(encoding="utf-8")[:200]
    assert re.search(r'^license = \{text = "Apache-2.0"\}$', (ROOT / "pyproject.toml").read_text(encoding="utf-8"), re.M)
