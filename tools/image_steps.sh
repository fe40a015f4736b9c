#!/usr/bin/env bash
# The Dockerfile's build steps without Docker: stage 1 (wheels for the hashed lock and for Botflow, built from
# a copy holding only what the Dockerfile copies), stage 2 (a fresh virtual environment installing those
# wheels with no index), then the result started as the image starts it, from an empty directory, under a
# user that owns nothing in the repository when run as root. What this cannot check: the base image, the
# useradd line, the labels, BuildKit's bind mount and the HEALTHCHECK as Docker runs it.
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d "${TMPDIR:-/tmp}/botflow-image.XXXXXX")
trap 'kill "${server:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT
say() { printf '[image_steps] %s\n' "$*"; }
# One interpreter builds the wheels and runs them, so environment markers agree; PYTHON picks it. The
# system's by default: an interpreter under root's home cannot be run by the unprivileged user below.
py=${PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}
say "building and running with $("$py" --version)"

say "stage 1: wheels from requirements/app.txt (hashes required)"
mkdir -p "$work/src/requirements" "$work/wheels"
cp requirements/app.txt "$work/src/requirements/"
"$py" -m pip wheel -q --disable-pip-version-check --require-hashes --wheel-dir "$work/wheels" -r requirements/app.txt
say "stage 1: the Botflow wheel from pyproject.toml README.md LICENSE static flows server web only"
cp pyproject.toml README.md LICENSE "$work/src/"
cp -r static flows server web "$work/src/"
find "$work/src" -name __pycache__ -prune -exec rm -rf {} +
(cd "$work/src" && "$py" -m pip wheel -q --disable-pip-version-check --no-deps --wheel-dir "$work/wheels" .)

say "stage 2: a fresh environment installing the wheels with no index"
"$py" -m venv "$work/venv"
"$work/venv/bin/pip" install -q --disable-pip-version-check --no-index --find-links "$work/wheels" botflow
"$work/venv/bin/botflow" --version

say "the image's command, from an empty directory"
mkdir -p "$work/app"
run=()
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
  chown -R nobody "$work/app"
  chmod -R a+rX "$work"
  run=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
fi
port=$(python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")
(cd "$work/app" && env -i PATH=/usr/bin:/bin HOME="$work/app" BOTFLOW_LOG_FORMAT=json BOTFLOW_SECRET_KEY=image-steps \
  "${run[@]}" "$work/venv/bin/botflow" serve --host 127.0.0.1 --port "$port" >"$work/server.log" 2>&1) &
server=$!
for _ in $(seq 1 60); do
  if "$work/venv/bin/python" -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/healthz', timeout=2)" 2>/dev/null; then
    css=$("$work/venv/bin/python" -c "
import re, urllib.request
page = urllib.request.urlopen('http://127.0.0.1:$port/login', timeout=5).read().decode()
url = re.search(r'href=\"(/static/v/[0-9a-f]+/css/app.css)\"', page).group(1)
answer = urllib.request.urlopen('http://127.0.0.1:$port' + url, timeout=5)
print(answer.headers['Cache-Control'])")
    say "healthz answered; the stylesheet comes with: $css"
    say "the wheel holds: $(unzip -l "$work"/wheels/botflow-*.whl | awk 'NR>3 {print $4}' | cut -d/ -f1 | sort -u | grep -v '^$' | tr '\n' ' ')"
    exit 0
  fi
  sleep 1
done
say "the server did not answer /healthz:"; tail -30 "$work/server.log"; exit 1
