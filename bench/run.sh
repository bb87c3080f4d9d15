#!/usr/bin/env bash
# Runs a sellable-bench scenario against a fresh release server on SQLite or PostgreSQL.
#   bench/run.sh flash-sale sqlite|postgres [N] [M] [C]     N units
#   bench/run.sh hot-slot   sqlite|postgres [K] [M] [C]     K places
#   bench/run.sh hot-accept sqlite|postgres [N] [M] [C]     flash-sale with N >= M units (default N = M): every attempt accepted
#   bench/run.sh hot-book   sqlite|postgres [K] [M] [C]     hot-slot of K places (default 1000, the most a slot has), one try per customer, after 500 untimed bookings of another slot
#   bench/run.sh code-sale  sqlite|postgres [N] [M] [C]     N codes
#   bench/run.sh combined-order sqlite|postgres [N] [M] [C] N units and N places (N <= 1000), one of each per order
#   bench/run.sh import     sqlite|postgres [N]             N codes in one uploaded file
#   bench/run.sh catalog    sqlite|postgres [N]             N SKUs; times the sellable listing and single verdicts
#   bench/run.sh pages      sqlite|postgres [N] [CODES]     N SKUs and one voucher of CODES codes; times every back-office page
#   bench/run.sh webhook-drain sqlite|postgres [N] [-] [C]  N events queued for a paused webhook, then drained
#   bench/run.sh reconcile  sqlite|postgres [N] [L] [K]     N SKUs and L ledger rows written into the database; a full
#                                                           reconciliation, K SKUs changed, then a changed-only one
#   backend "redis" = PostgreSQL with the Redis gate ($BENCH_REDIS, default redis://127.0.0.1:6379, own key prefix;
#   several node URLs, comma-separated, name a Redis Cluster: `BENCH_REDIS=$(.ci/redis-cluster)`).
# PostgreSQL: uses a new database on $BENCH_PG (default postgres://postgres@127.0.0.1:5432) and drops it after.
# BENCH_KEEP_DB=1 keeps the database (and the SQLite work directory) and prints where; BENCH_KEEP_LOG=FILE copies the server log.
# SELLABLE_BENCH_ANSWERS=FILE writes every raced answer (done_us,accepted,latency_us) as CSV, to see where a tail comes from.
set -euo pipefail
cd "$(dirname "$0")/.."
scenario=${1:-flash-sale}; backend=${2:-sqlite}; attempts=${4:-20000}; conns=${5:-64}
command=$scenario; extra=()
case "$scenario" in
  flash-sale) size_flag=--units; size=${3:-1000} ;;
  hot-accept) command=flash-sale; size_flag=--units; size=${3:-$attempts} ;;
  hot-book) command=hot-slot; size_flag=--capacity; size=${3:-1000}; extra=(--tries 1 --warm-up 500) ;;
  hot-slot) size_flag=--capacity; size=${3:-100} ;;
  code-sale) size_flag=--codes; size=${3:-1000} ;;
  combined-order) size_flag=--units; size=${3:-1000} ;;
  import) size_flag=--count; size=${3:-1000000} ;;
  catalog) size_flag=--skus; size=${3:-10000} ;;
  pages) size_flag=--skus; size=${3:-10000}; codes=${4:-1000000} ;;
  webhook-drain) size_flag=--events; size=${3:-10000}; export SELLABLE_WEBHOOK_ALLOW_PRIVATE=1 ;;
  # The server's own reconciliation stays off: the bench times its runs, and another would move the watermark.
  reconcile) size=${3:-100000}; ledger=${4:-1000000}; changed=${5:-100}; export SELLABLE_RECONCILE_INTERVAL_SECONDS=0 ;;
  *) echo "usage: $0 flash-sale|hot-slot|hot-accept|hot-book|code-sale|combined-order|import|catalog|pages|webhook-drain|reconcile sqlite|postgres|redis [size] [M] [C]" >&2; exit 2 ;;
esac
port=${BENCH_PORT:-18181}
bin=${CARGO_TARGET_DIR:-target}/release
[ -n "${BENCH_NO_BUILD:-}" ] || cargo build --release --bins --features bench -q
work=$(mktemp -d)
case "$backend" in
  sqlite) export DATABASE_URL="sqlite://$work/bench.db" ;;
  postgres|redis)
    pg=${BENCH_PG:-postgres://postgres@127.0.0.1:5432}
    db="sellable_bench_$$"
    psql "$pg/postgres" -qc "CREATE DATABASE $db" >/dev/null
    export DATABASE_URL="$pg/$db"
    if [ "$backend" = redis ]; then
      export REDIS_URL=${BENCH_REDIS:-redis://127.0.0.1:6379} SELLABLE_REDIS_PREFIX="bench$$"
    else
      unset REDIS_URL
    fi ;;
  *) echo "usage: $0 flash-sale|hot-slot|code-sale|import|catalog sqlite|postgres|redis [size] [M] [C]" >&2; exit 2 ;;
esac
SELLABLE_CODE_KEY_FILE="$work/keys.json" SELLABLE_UPLOAD_DIR="$work/uploads" SELLABLE_LOG=${SELLABLE_LOG:-warn} "$bin"/sellable serve --demo --bind "127.0.0.1:$port" >"$work/server.log" 2>&1 &
server=$!
cleanup() {
  kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true
  if [ -n "${BENCH_KEEP_DB:-}" ]; then
    # Kept for looking into afterwards (query plans): say where it is, remove nothing.
    if [ "$backend" = sqlite ]; then echo "kept          $work/bench.db"; else echo "kept          $DATABASE_URL"; fi
    return
  fi
  if [ "$backend" != sqlite ]; then psql "$pg/postgres" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null; fi
  if [ "$backend" = redis ]; then
    # One Redis, or each node of a cluster (BENCH_REDIS lists them, comma-separated): a key at a time there.
    for u in ${REDIS_URL//,/ }; do
      redis-cli -u "$u" --scan --pattern "$SELLABLE_REDIS_PREFIX:*" | xargs -r -n "$([ "$u" = "$REDIS_URL" ] && echo 1000 || echo 1)" redis-cli -c -u "$u" DEL >/dev/null 2>&1 || true
    done
  fi
  rm -rf "$work"
}
trap cleanup EXIT
[ -n "${BENCH_KEEP_LOG:-}" ] && trap 'cp "$work/server.log" "$BENCH_KEEP_LOG"; cleanup' EXIT
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.1; done
key=$(SELLABLE_LOG=warn SELLABLE_CODE_KEY_FILE="$work/keys.json" "$bin"/sellable apikey create --merchant demo --name bench --rate-per-second 0)
echo "backend       $backend"
status=0
if [ "$scenario" = import ]; then
  "$bin"/sellable-bench import --url "http://127.0.0.1:$port" --api-key "$key" --count "$size" || status=$?
elif [ "$scenario" = webhook-drain ]; then
  "$bin"/sellable-bench webhook-drain --url "http://127.0.0.1:$port" --api-key "$key" --events "$size" --concurrency "$conns" || status=$?
elif [ "$scenario" = pages ]; then
  "$bin"/sellable-bench pages --url "http://127.0.0.1:$port" --api-key "$key" --skus "$size" --codes "$codes" \
    --settle "SELLABLE_LOG=warn $bin/sellable analyze >/dev/null" || status=$?
elif [ "$scenario" = reconcile ]; then
  "$bin"/sellable-bench reconcile --url "http://127.0.0.1:$port" --api-key "$key" --database-url "$DATABASE_URL" \
    --skus "$size" --ledger "$ledger" --changed "$changed" || status=$?
elif [ "$scenario" = catalog ]; then
  "$bin"/sellable-bench catalog --url "http://127.0.0.1:$port" --api-key "$key" --skus "$size" || status=$?
else
  "$bin"/sellable-bench "$command" --url "http://127.0.0.1:$port" --api-key "$key" \
    "$size_flag" "$size" --attempts "$attempts" --concurrency "$conns" "${extra[@]}" || status=$?
fi
echo "server RSS    $(ps -o rss= -p "$server" | awk '{printf "%.0f MiB", $1/1024}') after the run, peak $(awk '/VmHWM/ {printf "%.0f MiB", $2/1024}' /proc/$server/status)"
if [ "$status" != 0 ]; then
  # A failed check or an unexpected answer: what the server logged says why (the log goes with the run).
  echo "server log    (warnings and errors, last 20)"
  grep -aE 'WARN|ERROR' "$work/server.log" | grep -v 'keys for codes at rest' | tail -20 | sed 's/^/  /'
  exit "$status"
fi
