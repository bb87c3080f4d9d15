#!/usr/bin/env bash
# Issue 6's comparison in one run, on PostgreSQL: a scenario with the Redis gate, the same on SQL
# alone, and the raw rate of the gate's own Lua script answering "no" (redis-benchmark EVALSHA on
# one key) as the ceiling.
#   bench/gate.sh flash-sale|hot-slot|code-sale [size] [M] [C]      defaults: 1000 200000 256
# Besides the whole run's rates it reports the sold-out phase's (after the last sale), which is the
# "no" path the issue compares.
# On two shared cores one run of a few seconds varies by ±10%: the gate mode and the ceiling run
# BENCH_RUNS times (default 3, each on a fresh server and key) and the median is reported; SQL alone,
# a minute a run, runs once.
set -euo pipefail
cd "$(dirname "$0")/.."
scenario=${1:-flash-sale}; size=${2:-1000}; attempts=${3:-200000}; conns=${4:-256}
host=${BENCH_REDIS_HOST:-127.0.0.1}; port=${BENCH_REDIS_PORT:-6379}
export BENCH_REDIS="redis://$host:$port"
cargo build --release --bins --features bench -q
rc() { redis-cli -h "$host" -p "$port" "$@"; }
# The keys are laid out as src/infra/counters/mod.rs builds them ("key names"): change both together.
k="benchraw$$"
now_ms=$(($(date +%s) * 1000))
case "$scenario" in
  flash-sale)
    script=src/infra/lua/stock_reserve.lua
    rc SET "$k:{s1}:whs" 1 >/dev/null
    rc HSET "$k:{s1}:w:1" a 0 l 0 s 1000 >/dev/null
    args=(2 "$k:{s1}:whs" "$k:{s1}:o:x" 1 60 "") ;;
  hot-slot)
    script=src/infra/lua/slot_book.lua
    rc HSET "$k:{t1.1}" r 0 st OPEN why "" at $((now_ms + 86400000)) >/dev/null
    args=(3 "$k:{t1.1}" "$k:{t1.1}:c:x" "$k:{t1.1}:c:x" "$now_ms" $((now_ms / 1000 + 86400))) ;;
  code-sale)
    # The voucher scripts run with code_pool.lua prepended (counters/mod.rs, code_script!).
    script="src/infra/lua/code_pool.lua src/infra/lua/code_hold.lua"
    rc HSET "$k:{c1}:meta" more 0 cur 0 >/dev/null
    args=(3 "$k:{c1}:pool" "$k:{c1}:meta" "$k:{c1}:o:x" 1 60 200) ;;
  *) echo "usage: $0 flash-sale|hot-slot|code-sale [size] [M] [C]   (PostgreSQL + Redis only)" >&2; exit 2 ;;
esac
# shellcheck disable=SC2086 # code-sale names two files
sha=$(rc SCRIPT LOAD "$(cat $script)")
runs=${BENCH_RUNS:-3}
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
out=$(mktemp); trap 'rm -f "$out" "$out.sql"; rc DEL "$k:{s1}:whs" "$k:{s1}:w:1" "$k:{t1.1}" "$k:{c1}:meta" >/dev/null' EXIT
for i in $(seq 1 "$runs"); do
  echo "== $scenario with the Redis gate (PostgreSQL + Redis), run $i of $runs"
  BENCH_NO_BUILD=1 bench/run.sh "$scenario" redis "$size" "$attempts" "$conns" | tee -a "$out"
  echo
done
echo "== $scenario on SQL alone (PostgreSQL)"
BENCH_NO_BUILD=1 bench/run.sh "$scenario" postgres "$size" "$attempts" "$conns" | tee "$out.sql"
echo
echo "== ceiling: redis-benchmark -n 200000 -c 50 EVALSHA ${script##*/} (sold out, one key), $runs runs"
raw=$(for _ in $(seq 1 "$runs"); do
  redis-benchmark -h "$host" -p "$port" -n 200000 -c 50 -q EVALSHA "$sha" "${args[@]}" | tr '\r' '\n' |
    awk '/requests per second/ {for (i = 1; i <= NF; i++) if ($(i + 1) == "requests") print $i}'
done)
echo "$raw" | tr '\n' ' '; echo
echo
echo "== medians of $runs runs"
echo "gate rejected/s   $(awk '/^rejected\/s/ {print $2}' "$out" | median)"
echo "gate p99 latency  $(awk '/^p99 latency/ {print $3}' "$out" | median) ms"
echo "raw EVALSHA/s     $(echo "$raw" | median)"
# The "no" path alone: refusals after the last sale, over the time after it (the sales themselves take
# a different share of each mode's run).
echo "gate sold-out/s   $(awk '/^sold-out\/s/ {print $2}' "$out" | median)"
echo "gate sold-out p99 $(awk '/^sold-out p99/ {print $3}' "$out" | median) ms"
echo "SQL sold-out/s    $(awk '/^sold-out\/s/ {print $2}' "$out.sql")"
