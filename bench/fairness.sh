#!/usr/bin/env bash
# The fairness benchmarks of issue 52 against a fresh release server with the demo data.
#   bench/fairness.sh account-flood sqlite|postgres   300 wrong sign-ins for one account from 200 addresses
#   bench/fairness.sh webhooks      sqlite|postgres   merchant B's deliveries beside 50 dead endpoints of A
# PostgreSQL: a new database on $BENCH_PG (default postgres://postgres@127.0.0.1:5432), dropped after.
set -euo pipefail
cd "$(dirname "$0")/.."
scenario=${1:-account-flood}; backend=${2:-sqlite}
case "$scenario" in account-flood|webhooks) ;; *) echo "usage: $0 account-flood|webhooks sqlite|postgres" >&2; exit 2 ;; esac
port=${BENCH_PORT:-18183}
bin=${CARGO_TARGET_DIR:-target}/release
[ -n "${BENCH_NO_BUILD:-}" ] || cargo build --release --bin sellable -q
work=$(mktemp -d)
case "$backend" in
  sqlite) export DATABASE_URL="sqlite://$work/bench.db" ;;
  postgres)
    pg=${BENCH_PG:-postgres://postgres@127.0.0.1:5432}
    db="sellable_fair_$$"
    psql "$pg/postgres" -qc "CREATE DATABASE $db" >/dev/null
    export DATABASE_URL="$pg/$db" ;;
  *) echo "usage: $0 account-flood|webhooks sqlite|postgres" >&2; exit 2 ;;
esac
unset REDIS_URL
export SELLABLE_CODE_KEY_FILE="$work/keys.json" SELLABLE_UPLOAD_DIR="$work/uploads" SELLABLE_LOG=${SELLABLE_LOG:-warn}
SELLABLE_WEBHOOK_ALLOW_PRIVATE=1 SELLABLE_MAX_WEBHOOKS_PER_MERCHANT=60 SELLABLE_WEBHOOK_POLL_MS=200 \
  "$bin"/sellable serve --demo --bind "127.0.0.1:$port" >"$work/server.log" 2>&1 &
server=$!
cleanup() {
  kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true
  if [ "$backend" = postgres ]; then psql "$pg/postgres" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null; fi
  rm -rf "$work"
}
trap cleanup EXIT
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.1; done
echo "backend         $backend ($(nproc) cores)"
if [ "$scenario" = account-flood ]; then
  python3 bench/fairness.py account-flood "http://127.0.0.1:$port" "$server" admin@demo.local staff@demo.local staff-demo-1
else
  "$bin"/sellable merchant add --slug other --name "Other merchant" >/dev/null
  key_a=$("$bin"/sellable apikey create --merchant demo --name bench --rate-per-second 0)
  key_b=$("$bin"/sellable apikey create --merchant other --name bench --rate-per-second 0)
  python3 bench/fairness.py webhooks "http://127.0.0.1:$port" "$key_a" "$key_b" 50 60
fi
