#!/usr/bin/env bash
# How client balancing policies cope with one bad replica of three, for a fan-out workload, side by
# side in one run (bench-policies/src/main/java/dev/grpcops/bench/policies/PolicyBench.java):
#
#   scripts/bench-policies.sh [--rate 200] [--seconds 15] [--warmup 5] [--service-ms 5] [--out FILE]
#                             [--only round_robin,grpcops_peak_ewma,...] [--build]
#
# One JVM: three Stock replicas on 127.0.0.2, 127.0.0.3 and 127.0.0.4 (loopback, fresh ports), each
# answering after --service-ms without holding a thread and sending per-call ORCA load reports; a
# client channel on list:///<the three> per policy and scenario. Policies: round_robin,
# least_request_experimental, weighted_round_robin (grpc-xds, gRFC A58), grpcops_peak_ewma
# (grpcops-core), and round_robin+od, grpcops_peak_ewma+od under outlier_detection_experimental.
# Per policy: a warm-up without fault, then each scenario on a fresh channel: none, slow (+200 ms),
# stalled (replies held during the first 200 ms of every second), failing (50 % UNAVAILABLE), all on
# 127.0.0.3. Load: an open loop of checkouts of 5 parallel Check calls, 1 s deadline each.
# Prints a Markdown table (p50/p99/p99.9 of checkout latency, % complete, the bad replica's share of
# calls); --out writes it to FILE too. Takes about warmup + 4 x (seconds + 0.5) s per policy, plus
# one JVM warm-up: 7 minutes at the defaults.
#
# Options:
#   --rate N        checkouts per second (default 200; 5 calls each)
#   --seconds D     measured seconds per scenario (default 15)
#   --warmup W      warm-up seconds per policy, no fault (default 5)
#   --service-ms N  how long a good replica takes to answer (default 5)
#   --out FILE      also write the report to FILE
#   --only LIST     only these policies, comma-separated (default: all six)
#   --build         rebuild even if the build outputs exist (default: build only what is missing;
#                   after changing grpcops-core or the bench, pass --build)
# Environment:
#   POLICY_BENCH_JAVA_OPTS   JVM options for the run (default: none)
#
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
}
die() { echo "bench-policies: $*" >&2; exit 2; }

FORCE_BUILD=false
ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build) FORCE_BUILD=true; shift ;;
    -h|--help) usage; exit 0 ;;
    --rate|--seconds|--warmup|--service-ms|--out|--only)
      [ $# -ge 2 ] || die "$1 needs a value"; ARGS+=("$1" "$2"); shift 2 ;;
    *) usage >&2; die "unknown argument: $1" ;;
  esac
done

JAR=bench-policies/target/grpcops-bench-policies.jar
if $FORCE_BUILD || [ ! -f "$JAR" ]; then
  echo "bench-policies: building $JAR (mvn package -DskipTests) ..." >&2
  mvn -B -q -ntp -pl bench-policies -am package -DskipTests >&2
fi

# Word splitting wanted: POLICY_BENCH_JAVA_OPTS holds several options.
# shellcheck disable=SC2086
exec java ${POLICY_BENCH_JAVA_OPTS:-} -jar "$JAR" "${ARGS[@]}"
