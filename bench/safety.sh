#!/usr/bin/env bash
# The safety benchmarks of issue 14 against a fresh release server with the demo data.
#   bench/safety.sh login-flood sqlite|postgres [N]   N concurrent wrong sign-ins (default 500): peak RSS, API p99
#   bench/safety.sh idle        sqlite|postgres [N]   N idle half-sent connections (default 2000): API p99, closed
#   bench/safety.sh text-parts  sqlite|postgres [N]   N uploads with a 60 MB text part at once (default 6): peak RSS
# PostgreSQL: a new database on $BENCH_PG (default postgres://postgres@127.0.0.1:5432), dropped after.
set -euo pipefail
cd "$(dirname "$0")/.."
scenario=${1:-login-flood}; backend=${2:-sqlite}
case "$scenario" in
  login-flood) n=${3:-500} ;;
  idle) n=${3:-2000} ;;
  text-parts) n=${3:-6} ;;
  *) echo "usage: $0 login-flood|idle|text-parts sqlite|postgres [N]" >&2; exit 2 ;;
esac
port=${BENCH_PORT:-18182}
. bench/fresh-server.sh
key=$("$bin"/sellable apikey create --merchant demo --name bench --rate-per-second 0)
echo "backend         $backend ($(nproc) cores)"
if [ "$scenario" = login-flood ]; then
  python3 bench/safety.py login-flood "http://127.0.0.1:$port" "$key" "$server" "$n"
elif [ "$scenario" = text-parts ]; then
  python3 bench/safety.py text-parts "http://127.0.0.1:$port" "$key" "$server" "$n" 60
else
  python3 bench/safety.py idle "http://127.0.0.1:$port" "$key" "$n" 10
fi
