# Sourced by the benchmark scripts: sets jar to the benchmarks' uber-jar, or stops with how to build it.
jar="${BENCHMARKS_JAR:-benchmarks/target/benchmarks.jar}"
if [ ! -f "$jar" ]; then
    echo "$jar is missing: build it with mvn -B -DskipTests package -pl benchmarks -am" >&2
    exit 1
fi
