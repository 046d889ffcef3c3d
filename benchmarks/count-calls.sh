#!/usr/bin/env bash
# Counts what one lock+unlock costs the machine, where timing it would drown in a shared machine's noise: system calls
# and context switches of the benchmark JVM (perf's tracepoints), the JVM's CPU time and the Redis nodes' CPU time
# (/proc), over 4 s of steady state, divided by the operations JMH measured in the same seconds.
#
# Usage: benchmarks/count-calls.sh BENCHMARK [JVM options for the fork]
#   BENCHMARK  a JMH regular expression naming one benchmark, e.g. 'DistinctKeys16.redlock$' or 'Latency.ideal$'
#   SLOW       the @Param slow of Latency (none, first, last, one), default none
#   TRANSPORT  the @Param transport of our client (pipelined, shared, pooled), default pipelined
# Needs perf (Debian: linux-perf) and the right to trace (root, or kernel.perf_event_paranoid <= -1).
# Build first: mvn -B -DskipTests package -pl benchmarks -am
set -euo pipefail

benchmark="${1:?usage: benchmarks/count-calls.sh BENCHMARK [JVM options]}"
jvm_options="${2:-}"
source "$(dirname "$0")/benchmarks-jar.sh"
command -v perf >/dev/null || { echo "perf is missing (Debian: apt-get install linux-perf)" >&2; exit 1; }

work=$(mktemp -d -t count-calls.XXXXXX)
log="$work/jmh.log"
# 14 one-second iterations, operations per second: the counts are taken during iterations 9 to 12
args=(-p nodes=5 -p "slow=${SLOW:-none}" -wi 0 -i 14 -r 1 -f 1 -bm thrpt -tu s)
if [ -n "${TRANSPORT:-}" ]; then
    args+=(-p "transport=$TRANSPORT")
fi
if [ -n "$jvm_options" ]; then
    args+=(-jvmArgsAppend "$jvm_options")
fi
java -jar "$jar" "${args[@]}" "$benchmark" >"$log" 2>&1 &
jmh=$!

for _ in $(seq 600); do
    grep -q "^Iteration   9" "$log" 2>/dev/null && break
    sleep 0.2
done
fork=$(pgrep -P "$jmh" java | head -n 1 || true)
if [ -z "$fork" ]; then
    echo "no forked JVM found; JMH said:" >&2
    tail -n 20 "$log" >&2
    exit 1
fi
nodes=$(pgrep -P "$fork" redis-server | tr '\n' ' ' || true)

# user + system time of processes, in clock ticks
ticks() {
    local total=0 pid
    for pid in "$@"; do
        total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat")))
    done
    echo "$total"
}
# shellcheck disable=SC2086
jvm_before=$(ticks "$fork"); nodes_before=$(ticks $nodes)
perf stat -x, -o "$work/perf.csv" -e 'context-switches,syscalls:sys_enter_read,syscalls:sys_enter_write,syscalls:sys_enter_ioctl,syscalls:sys_enter_poll' -p "$fork" -- sleep 4
# shellcheck disable=SC2086
jvm_after=$(ticks "$fork"); nodes_after=$(ticks $nodes)
wait "$jmh"

ops=$(grep -E "^Iteration +(9|1[0-2]):" "$log" | awk '{sum += $3} END {print sum / 4}')
hz=$(getconf CLK_TCK)
grep -v '^#' "$work/perf.csv" | grep . | awk -F, -v ops="$ops" -v hz="$hz" -v jvm=$((jvm_after - jvm_before)) \
        -v nodes=$((nodes_after - nodes_before)) -v name="$benchmark" '
    BEGIN { printf "%s: %.0f ops/s; per operation: JVM CPU %.0f us, nodes CPU %.0f us", name, ops,
            jvm * 1e6 / hz / (ops * 4), nodes * 1e6 / hz / (ops * 4) }
    { n = split($3, event, "_"); printf ", %s %.2f", event[n], $1 / (ops * 4) }
    END { print "" }'
rm -rf "$work"
