#!/usr/bin/env bash
# Runs every benchmark in interleaved rounds (round 1 runs them all, then round 2 runs them all, ...), so a machine
# that slows down for a while slows every client alike, then prints the ratio tables of benchmarks/ratio-table.py:
# medians over the rounds, with the spread.
#
# Usage: benchmarks/run-rounds.sh [rounds, default 5] [directory for the JSON files, default benchmarks/target/rounds]
# Build first: mvn -B -DskipTests package -pl benchmarks -am
# Each round: latency on 1 and 3 nodes (mean time), latency on 5 nodes (mean and sampled time), and 16 threads on
# distinct keys and on one key (5 nodes), all with -prof gc; about 4 to 5 minutes per round on 2 cores.
set -euo pipefail

rounds="${1:-5}"
out="${2:-benchmarks/target/rounds}"
source "$(dirname "$0")/benchmarks-jar.sh"
mkdir -p "$out"
common=(-wi 3 -w 1 -i 3 -r 1 -f 1 -prof gc -rf json)

specs=()
for round in $(seq 1 "$rounds"); do
    echo "=== round $round of $rounds"
    java -jar "$jar" "${common[@]}" -p nodes=1,3 -bm avgt -rff "$out/round$round-latency-1-3.json" 'Latency'
    java -jar "$jar" "${common[@]}" -p nodes=5 -rff "$out/round$round-latency-5.json" 'Latency'
    java -jar "$jar" "${common[@]}" -p nodes=5 -rff "$out/round$round-threads-16.json" 'DistinctKeys16|OneKey16'
    specs+=("$out/round$round-latency-1-3.json+$out/round$round-latency-5.json+$out/round$round-threads-16.json")
done
python3 benchmarks/ratio-table.py "${specs[@]}"
