# Sourced by the bench scripts: a fresh release server with the demo data on $backend (sqlite or
# postgres) at 127.0.0.1:$port, removed on exit. Sets $bin, $work and $server. The caller exports
# any setting of its own (SELLABLE_…) before sourcing. PostgreSQL: a new database on $BENCH_PG
# (default postgres://postgres@127.0.0.1:5432), dropped after.
bin=${CARGO_TARGET_DIR:-target}/release
[ -n "${BENCH_NO_BUILD:-}" ] || cargo build --release --bin sellable -q
work=$(mktemp -d)
case "$backend" in
  sqlite) export DATABASE_URL="sqlite://$work/bench.db" ;;
  postgres)
    pg=${BENCH_PG:-postgres://postgres@127.0.0.1:5432}
    db="sellable_bench_$$"
    psql "$pg/postgres" -qc "CREATE DATABASE $db" >/dev/null
    export DATABASE_URL="$pg/$db" ;;
  *) echo "backend: sqlite or postgres, not $backend" >&2; exit 2 ;;
esac
unset REDIS_URL
export SELLABLE_CODE_KEY_FILE="$work/keys.json" SELLABLE_UPLOAD_DIR="$work/uploads" SELLABLE_LOG=${SELLABLE_LOG:-warn}
"$bin"/sellable serve --demo --bind "127.0.0.1:$port" >"$work/server.log" 2>&1 &
server=$!
cleanup() {
  kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true
  if [ "$backend" = postgres ]; then psql "$pg/postgres" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null; fi
  rm -rf "$work"
}
trap cleanup EXIT
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break; sleep 0.1; done
