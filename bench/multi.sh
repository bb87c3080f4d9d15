#!/usr/bin/env bash
# Several sellable instances on one PostgreSQL (and Redis) behind HAProxy, and a flash sale through it.
#   bench/multi.sh INSTANCES [N] [M] [C] [gate|sql] [kill]
#     INSTANCES  sellable processes (each its own port), HAProxy round-robin in front
#     N units, M attempts, C connections (as bench/run.sh flash-sale)
#     gate       with the Redis gate (default); sql: PostgreSQL alone
#     kill       kill -9 one instance a moment into the sale; HAProxy's health check takes it out,
#                the attempts it was serving are asked again (same order id) and every count must hold
# Needs haproxy (Debian's package: `apt-get install haproxy`). BENCH_NO_BUILD=1 uses the release build as is.
set -euo pipefail
cd "$(dirname "$0")/.."
instances=${1:-2}; units=${2:-1000}; attempts=${3:-200000}; conns=${4:-256}; mode=${5:-gate}; kill=${6:-}
command -v haproxy >/dev/null || { echo "haproxy is not installed (apt-get install haproxy)" >&2; exit 2; }
bin=${CARGO_TARGET_DIR:-target}/release
[ -n "${BENCH_NO_BUILD:-}" ] || cargo build --release --bins --features bench -q
work=$(mktemp -d)
pg=${BENCH_PG:-postgres://postgres@127.0.0.1:5432}
db="sellable_multi_$$"
psql "$pg/postgres" -qc "CREATE DATABASE $db" >/dev/null
export DATABASE_URL="$pg/$db" SELLABLE_CODE_KEY_FILE="$work/keys.json" SELLABLE_UPLOAD_DIR="$work/uploads"
export SELLABLE_LOG=${SELLABLE_LOG:-warn}
if [ "$mode" = gate ]; then
  export REDIS_URL=${BENCH_REDIS:-redis://127.0.0.1:6379} SELLABLE_REDIS_PREFIX="multi$$"
else
  unset REDIS_URL
fi
front=${BENCH_PORT:-18200}
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  psql "$pg/postgres" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null
  if [ "$mode" = gate ]; then
    redis-cli -u "$REDIS_URL" --scan --pattern "$SELLABLE_REDIS_PREFIX:*" | xargs -r -n 1000 redis-cli -u "$REDIS_URL" DEL >/dev/null
  fi
  rm -rf "$work"
}
trap cleanup EXIT
ready() { for _ in $(seq 1 200); do curl -sf "http://127.0.0.1:$1/readyz" >/dev/null && return 0; sleep 0.1; done; return 1; }
# The first instance migrates and loads the demo; the others start on the same database.
servers=""
for i in $(seq 1 "$instances"); do
  port=$((front + i))
  "$bin"/sellable serve --demo --bind "127.0.0.1:$port" >"$work/server$i.log" 2>&1 &
  pids+=($!)
  ready "$port" || { echo "instance $i did not start"; cat "$work/server$i.log"; exit 1; }
  servers+="  server s$i 127.0.0.1:$port check inter 500ms fall 3 rise 2"$'\n'
done
cat >"$work/haproxy.cfg" <<EOF
global
  maxconn 4000
defaults
  mode http
  timeout connect 2s
  timeout client 60s
  timeout server 60s
  timeout check 2s
  option http-keep-alive
  # A connection refused (the request never left) goes to another instance; a request an
  # instance dropped after taking it is not sent again: a POST is the client's to repeat.
  retries 2
  option redispatch
frontend sellable
  bind 127.0.0.1:$front
  default_backend instances
backend instances
  balance roundrobin
  option httpchk GET /readyz
$servers
EOF
haproxy -f "$work/haproxy.cfg" -db >"$work/haproxy.log" 2>&1 &
pids+=($!)
ready "$front"
key=$("$bin"/sellable apikey create --merchant demo --name bench --rate-per-second 0)
echo "instances     $instances behind HAProxy $(haproxy -v | head -1 | awk '{print $3}') (round robin), backend $mode"
if [ "$kill" = kill ]; then
  # One instance dies a second into the sale, without a goodbye.
  victim=${pids[$((instances - 1))]}
  (sleep 1; kill -9 "$victim"; echo "killed        instance $instances (pid $victim) at 1 s") &
fi
status=0
"$bin"/sellable-bench flash-sale --url "http://127.0.0.1:$front" --api-key "$key" --units "$units" \
  --attempts "$attempts" --concurrency "$conns" ${kill:+--retry-unknown} || status=$?
wait_rss=""
for i in $(seq 1 "$instances"); do
  p=${pids[$((i - 1))]}
  [ -e "/proc/$p/status" ] && wait_rss+=" s$i $(awk '/VmHWM/ {printf "%.0f MiB", $2/1024}' /proc/$p/status)"
done
echo "peak RSS     $wait_rss"
if [ "$status" != 0 ]; then
  for i in $(seq 1 "$instances"); do grep -aE 'WARN|ERROR' "$work/server$i.log" | tail -5 | sed "s/^/  s$i /"; done
fi
exit "$status"
