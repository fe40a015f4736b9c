#!/usr/bin/env bash
# Sets up everything the test suite needs on a fresh machine, then runs the whole suite.
# Python deps from the lock, Chromium, Caddy and promtool (apt) when missing, Redis and PostgreSQL started when they
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
compose_up() { have docker && docker info >/dev/null 2>&1 && docker compose -f docker-compose.yml -f deploy/compose.ports.yml up -d "$1"; }

say "installing Python dependencies from requirements/test.txt (hashed lock; ./tools/lock.sh refreshes it)"
python3 -m pip install -q --disable-pip-version-check --require-hashes -r requirements/test.txt || exit 1
python3 -m pip install -q --disable-pip-version-check --no-deps -e . || exit 1

if ! have chromium; then
  say "installing Chromium"
  apt_install chromium || { say "Chromium is missing and could not be installed"; exit 1; }
fi

if ! have caddy; then
  say "installing Caddy (the load-balancer test runs replicas behind deploy/Caddyfile)"
  apt_install caddy || { say "Caddy is missing and could not be installed"; exit 1; }
fi

if ! have promtool; then
  say "installing promtool (checks deploy/prometheus/alerts.yml)"
  apt_install --no-install-recommends prometheus || { say "promtool is missing and could not be installed"; exit 1; }
fi

if ! have faketime; then
  say "installing faketime (the fault matrix runs a replica whose clock is off)"
  apt_install faketime || say "faketime is missing: the fault matrix's clock rows cannot run"
fi
# The Sentinel failover tests run real sentinels: redis-sentinel, or redis-server --sentinel (the same binary).
if ! have redis-sentinel; then
  apt_install redis-sentinel || say "redis-sentinel is missing: the Sentinel tests use redis-server --sentinel"
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

# Exit 5 (nothing collected) is a failure, not a pass; otherwise the worst exit code wins.
verdict() { [ "$1" -eq 5 ] && { say "pytest collected no tests: that is a failure, not a pass"; return 1; }; return "$1"; }

if [ "$#" -gt 0 ]; then
  say "running pytest $*"
  python3 -m pytest -p no:cacheprovider "$@"
  verdict $?
  exit $?
fi

# Most tests wait on processes, sockets and the browser rather than on the CPU, so two workers (whole files
# each: a module's fixtures stay in one process) halve the wall time even on two cores. The fault suite
# measures stalls in seconds and runs alone afterwards, so another worker's load is not counted as its own.
# A worker that dies ends the run (--max-worker-restart=0): a replaced one can leave its file unscheduled and
# the run waiting for it until CI gives up.
workers=${BOTFLOW_TEST_WORKERS:-2}
say "running the test suite on $workers workers, then the fault suite alone"
python3 -m pytest -p no:cacheprovider -p no:benchmark -n "$workers" --dist loadfile --max-worker-restart=0 tests/unit tests/integration tests/e2e
first=$?
verdict "$first"; first=$?
python3 -m pytest -p no:cacheprovider tests/faults
second=$?
verdict "$second"; second=$?
[ "$first" -ne 0 ] && exit "$first"
exit "$second"
