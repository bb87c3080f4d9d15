#!/usr/bin/env bash
# Where the CPU goes while a bench runs: CPU time used by the sellable server (or the bare handler),
# the bench client, Redis and PostgreSQL over a window, read from /proc. Start a run
# (bench/hot.sh sold-out, bench/run.sh flash-sale redis 1000 800000 256, …), wait for the phase to
# measure, then:
#   bench/cpu.sh [SECONDS]     (default 5)
# Divide each by the requests answered in the window (the run's rate × SECONDS) for the CPU one
# request costs each process. docs/scaling.md "Sold-out refusals" has the numbers of 2026-12-04.
set -euo pipefail
window=${1:-5}
hz=$(getconf CLK_TCK)
ticks() {
  local t=0 p
  for p in "$@"; do
    [ -r "/proc/$p/stat" ] && t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat")))
  done
  echo "$t"
}
server=$(pgrep -f "sellable serve|sellable-bench bare" | head -1 || true)
client=$(pgrep -f "sellable-bench (flash-sale|ceiling|hot-slot|hot-accept)" | head -1 || true)
redis=$(pgrep -f redis-server | tr '\n' ' ' || true)
pg=$(pgrep -f postgres | tr '\n' ' ' || true)
busy() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8}' /proc/stat; }
# shellcheck disable=SC2086 # lists of pids, split on purpose
read -r s1 c1 r1 p1 b1 <<<"$(ticks $server) $(ticks $client) $(ticks $redis) $(ticks $pg) $(busy)"
sleep "$window"
# shellcheck disable=SC2086
read -r s2 c2 r2 p2 b2 <<<"$(ticks $server) $(ticks $client) $(ticks $redis) $(ticks $pg) $(busy)"
ms() { echo $(( ($1 - $2) * 1000 / hz )); }
echo "over ${window} s, CPU ms: server $(ms "$s2" "$s1")  client $(ms "$c2" "$c1")  redis $(ms "$r2" "$r1")  postgres $(ms "$p2" "$p1")  whole box $(ms "$b2" "$b1")"
