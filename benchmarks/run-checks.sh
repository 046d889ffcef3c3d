#!/usr/bin/env bash
# Runs the performance checks of docs/benchmarks.md ("Where it stands") in interleaved rounds, then prints them against
# their targets with benchmarks/checks-table.py: medians over the rounds, with the spread.
#
# Usage: benchmarks/run-checks.sh [rounds, default 5] [directory for the JSON files, default benchmarks/target/checks]
# Build first: mvn -B -DskipTests package -pl benchmarks -am
# Each round, about 3½ minutes on 2 cores: 16 threads on distinct keys; one thread, our client and the ideal one each
# in a JVM of its own, in turn first (JMH runs one command's benchmarks in alphabetical order), then both in one JVM,
# in turn on every invocation, and the ideal beside a second ideal as the method's control (SideBySide: a paired
# measurement, which the drift from one JVM to the next does not move); the floor beside the annotated path; two slow
# nodes of five, first or last; a fenced lock+unlock beside an unfenced one, with and without a slow node. HandOff
# runs once after the rounds (2 to 3 minutes). Nothing else should run meanwhile.
set -euo pipefail

rounds="${1:-5}"
out="${2:-benchmarks/target/checks}"
source "$(dirname "$0")/benchmarks-jar.sh"
mkdir -p "$out"

bench() {
    local name=$1
    shift
    java -jar "$jar" -p nodes=5 -f 1 -w 1 -r 1 -rf json -rff "$out/$name.json" "$@" > "$out/$name.log" 2>&1 \
        || { echo "$name failed: see $out/$name.log" >&2; exit 1; }
}

for round in $(seq 1 "$rounds"); do
    echo "=== round $round of $rounds, $(date +%T)"
    bench "round$round-threads-16" -wi 8 -i 5 -bm thrpt -tu s -prof gc 'DistinctKeys16.(floor|redlock|ideal|annotated)$'
    if (( round % 2 )); then order=(ideal redlock); else order=(redlock ideal); fi
    for client in "${order[@]}"; do
        bench "round$round-one-thread-$client" -wi 3 -i 5 -bm avgt -tu us -prof gc "Latency.$client\$"
    done
    bench "round$round-side-by-side" -wi 6 -i 5 'SideBySide'
    bench "round$round-one-thread-annotated" -wi 3 -i 5 -bm avgt -tu us -prof gc 'Latency.(floor|annotated)$'
    bench "round$round-slow-minority" -wi 2 -i 3 -p slow=first,last 'Latency.(floor|redlock)$'
    bench "round$round-fenced" -wi 3 -i 5 -bm avgt -tu us -p slow=none,one 'Latency.(floor|redlock|fenced)$'
done
echo "=== hand-off, $(date +%T)"
java -cp "$jar" dev.redlock.benchmarks.HandOff 3 > "$out/handoff.log" 2>&1 \
    || { echo "HandOff failed: see $out/handoff.log" >&2; exit 1; }
python3 benchmarks/checks-table.py "$out"
