#!/usr/bin/env bash
# Sets up everything the test suite needs on a fresh machine, then runs the whole suite.
# Python deps from the lock, Chromium and nginx (apt) when missing, Redis and PostgreSQL started when they
# do not answer.
set -uo pipefail
cd "$(dirname "$0")/.."

say() { printf '[tests/run.sh] %s\n' "$*"; }
answers() { python3 -c "import socket,sys; s=socket.socket(); s.settimeout(1); sys.exit(s.connect_ex(('127.0.0.1', $1)))"; }
wait_for() { for _ in $(seq 1 60); do answers "$1" && return 0; sleep 0.5; done; return 1; }
have() { command -v "$1" >/dev/null 2>&1; }
apt_install() {
  have apt-get || return 1
  [ -n "${APT_UPDATED:-}" ] || { apt-get update -qq >/dev/null && APT_UPDATED=1; }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}
compose_up() { have docker && docker info >/dev/null 2>&1 && docker compose up -d "$1"; }

say "installing Python dependencies from requirements/test.txt (hashed lock; ./tools/lock.sh refreshes it)"
python3 -m pip install -q --disable-pip-version-check --require-hashes -r requirements/test.txt || exit 1
python3 -m pip install -q --disable-pip-version-check --no-deps -e . || exit 1

if ! have chromium; then
  say "installing Chromium"
  apt_install chromium || { say "Chromium is missing and could not be installed"; exit 1; }
fi

if ! have nginx && [ ! -x /usr/sbin/nginx ]; then
  say "installing nginx (the load-balancer test runs replicas behind it)"
  apt_install nginx-light || apt_install nginx || { say "nginx is missing and could not be installed"; exit 1; }
fi

if ! answers 6379; then
  say "starting Redis"
  have redis-server || apt_install redis-server || true
  if have redis-server; then
    redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no >/dev/null
  else
    compose_up redis
  fi
  wait_for 6379 || { say "Redis does not answer on 127.0.0.1:6379"; exit 1; }
fi

if ! answers 5432; then
  say "starting PostgreSQL"
  if ! ls /etc/postgresql/*/main >/dev/null 2>&1 && ! have docker; then apt_install postgresql || true; fi
  if ls /etc/postgresql/*/main >/dev/null 2>&1; then
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || true
  else
    compose_up postgres
  fi
  wait_for 5432 || { say "PostgreSQL does not answer on 127.0.0.1:5432"; exit 1; }
fi

say "running the test suite"
python3 -m pytest -p no:cacheprovider "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
  say "pytest collected no tests: that is a failure, not a pass"
  exit 1
fi
exit "$rc"
