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
export SELLABLE_WEBHOOK_ALLOW_PRIVATE=1 SELLABLE_MAX_WEBHOOKS_PER_MERCHANT=60 SELLABLE_WEBHOOK_POLL_MS=200
. bench/fresh-server.sh
echo "backend         $backend ($(nproc) cores)"
if [ "$scenario" = account-flood ]; then
  python3 bench/fairness.py account-flood "http://127.0.0.1:$port" "$server" admin@demo.local staff@demo.local staff-demo-1
else
  "$bin"/sellable merchant add --slug other --name "Other merchant" >/dev/null
  key_a=$("$bin"/sellable apikey create --merchant demo --name bench --rate-per-second 0)
  key_b=$("$bin"/sellable apikey create --merchant other --name bench --rate-per-second 0)
  python3 bench/fairness.py webhooks "http://127.0.0.1:$port" "$key_a" "$key_b" 50 60
fi
