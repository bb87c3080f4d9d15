#!/usr/bin/env bash
# Issue 21's hot paths beside their ceilings, measured in one run on this box:
#   bench/hot.sh accept   [M] [C]   pgbench's ceiling of one hot row (a conditional UPDATE alone, and
#                                   with an INSERT), then hot-accept (M reservations of one unit, all
#                                   accepted) on PostgreSQL grouped, and alone (SELLABLE_HOT_BATCH=0)
#   bench/hot.sh book     [M] [C]   the same ceiling, then hot-book (M bookings of one slot of 1,000
#                                   places, the most a slot has, each a new customer) on PostgreSQL,
#                                   grouped and alone; its rate is over the time to the last booking
#   bench/hot.sh sold-out [M] [C]   a bare axum handler's 409 rate (`sellable-bench bare`), then a
#                                   flash sale's refusals after it sold out, with the Redis gate (sold
#                                   out remembered, the default; and asking Redis every time) and on
#                                   SQL alone
# Defaults: M = 20000 (book: 2000; sold-out: 200000), C = 64 (sold-out: 256). BENCH_SECONDS sets pgbench's run (10).
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-accept}
case "$what" in
  accept) attempts=${2:-20000}; conns=${3:-64} ;;
  book) attempts=${2:-2000}; conns=${3:-64} ;;
  sold-out) attempts=${2:-200000}; conns=${3:-256} ;;
  *) echo "usage: $0 accept|book|sold-out [M] [C]" >&2; exit 2 ;;
esac
[ -n "${BENCH_NO_BUILD:-}" ] || cargo build --release --bins --features bench -q
export BENCH_NO_BUILD=1
bin=${CARGO_TARGET_DIR:-target}/release
pg=${BENCH_PG:-postgres://postgres@127.0.0.1:5432}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
field() { awk -v k="$1" '$1 == k {print $2; exit}' "$2"; }

# One row taken down by one at a time, as a sale takes a balance: the most commits a second that
# PostgreSQL gives one hot row on this box, with nothing of sellable's in the way.
pgbench_ceiling() {
  local db="sellable_pgbench_$$" f="$out/pgbench.sql"
  psql "$pg/postgres" -qc "CREATE DATABASE $db" >/dev/null
  psql "$pg/$db" -q >/dev/null <<'SQL'
CREATE TABLE hot (id int PRIMARY KEY, n bigint NOT NULL);
INSERT INTO hot VALUES (1, 1000000000000);
CREATE TABLE hot_log (id bigserial PRIMARY KEY, n bigint NOT NULL, at timestamptz NOT NULL DEFAULT now());
SQL
  echo "UPDATE hot SET n = n - 1 WHERE id = 1 AND n > 0;" >"$f"
  pgbench -n -c "$conns" -j 2 -T "${BENCH_SECONDS:-10}" -f "$f" "$pg/$db" 2>/dev/null | awk '/^tps/ {print int($3)}' >"$out/up"
  printf 'BEGIN;\nUPDATE hot SET n = n - 1 WHERE id = 1 AND n > 0;\nINSERT INTO hot_log (n) VALUES (1);\nCOMMIT;\n' >"$f"
  pgbench -n -c "$conns" -j 2 -T "${BENCH_SECONDS:-10}" -f "$f" "$pg/$db" 2>/dev/null | awk '/^tps/ {print int($3)}' >"$out/ins"
  psql "$pg/postgres" -qc "DROP DATABASE $db WITH (FORCE)" >/dev/null
  echo "pgbench UPDATE/s           $(cat "$out/up")   (one row, $conns clients, ${BENCH_SECONDS:-10} s)"
  echo "pgbench UPDATE+INSERT/s    $(cat "$out/ins")"
}

case "$what" in
  accept|book)
    scenario=hot-$what
    echo "== ceiling: pgbench on one hot row"
    pgbench_ceiling
    echo
    echo "== $scenario on PostgreSQL, grouped (the default)"
    bench/run.sh "$scenario" postgres "" "$attempts" "$conns" | tee "$out/grouped"
    echo
    echo "== $scenario on PostgreSQL, each order alone (SELLABLE_HOT_BATCH=0)"
    SELLABLE_HOT_BATCH=0 bench/run.sh "$scenario" postgres "" "$attempts" "$conns" | tee "$out/alone"
    echo
    echo "== summary"
    for mode in grouped alone; do
      # Bookings stop at the slot's size: their rate is over the time to the last one.
      a=$(awk '$1 == "accept" && $2 == "rate" {sub("/s", "", $3); print $3; exit}' "$out/$mode")
      [ -n "$a" ] || a=$(field accepted/s "$out/$mode")
      printf '%-8s accepted/s %6s   p99 %s ms   %s x pgbench UPDATE/s, %s x UPDATE+INSERT/s\n' "$mode" "$a" \
        "$(awk '$1 == "p99" {print $3; exit}' "$out/$mode")" "$(ratio "$a" "$(cat "$out/up")")" "$(ratio "$a" "$(cat "$out/ins")")"
    done ;;
  sold-out)
    port=${BENCH_BARE_PORT:-18182}
    "$bin"/sellable-bench bare --bind "127.0.0.1:$port" &
    bare=$!
    for _ in $(seq 1 50); do curl -s -o /dev/null -X POST "http://127.0.0.1:$port/api/v1/reservations" && break; sleep 0.1; done
    echo "== ceiling: a bare axum handler's 409"
    "$bin"/sellable-bench ceiling --url "http://127.0.0.1:$port" --api-key none -m "$attempts" -c "$conns" | tee "$out/bare"
    kill "$bare"; wait "$bare" 2>/dev/null || true
    echo
    echo "== flash-sale with the Redis gate"
    bench/run.sh flash-sale redis 1000 "$attempts" "$conns" | tee "$out/gate"
    echo
    echo "== flash-sale with the Redis gate, every refusal asking Redis (SELLABLE_SOLD_OUT_MEMORY_MS=0)"
    SELLABLE_SOLD_OUT_MEMORY_MS=0 bench/run.sh flash-sale redis 1000 "$attempts" "$conns" | tee "$out/gate-asking"
    echo
    echo "== flash-sale on SQL alone (PostgreSQL)"
    bench/run.sh flash-sale postgres 1000 "$attempts" "$conns" | tee "$out/sql"
    echo
    echo "== summary"
    b=$(field rejected/s "$out/bare")
    echo "bare handler 409/s   $b"
    for mode in gate gate-asking sql; do
      so=$(field sold-out/s "$out/$mode")
      echo "$(printf '%-11s' "$mode") sold-out/s $(printf '%8s' "$so")   $(ratio "$so" "$b") x the bare handler   p99 $(awk '$1 == "sold-out" && $2 == "p99" {print $3; exit}' "$out/$mode") ms"
    done ;;
esac
