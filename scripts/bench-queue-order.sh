#!/usr/bin/env bash
# Admission's queue orders side by side under a flood (design §19): first come, first served against
# earliest deadline first with the answer at dequeue, on the same simulated calls
# (bench-policies/src/main/java/dev/grpcops/bench/admission/QueueOrderSimulation.java):
#
#   scripts/bench-queue-order.sh [--flood 2.0] [--seconds 60] [--seats 8] [--seed 1] [--out FILE] [--build]
#
# The real Admission on a simulated clock: a server of --seats seats, each call needing 10 ms plus an
# exponential 10 ms of work; a flood of --flood x the server's capacity with budgets of 50 ms-1 s; a
# polite caller at 5 % of capacity with budgets of 50-500 ms; callers give up at their deadline. Two
# scenarios: the flood from 3 callers, and the flood naming a new caller on every call (so it shares
# every fair queue with the polite caller). The result depends on the seed, not on the machine: it
# measures the rule, not the server's speed. Takes a few seconds.
#
# Options:
#   --flood X     the flood's offered load, times the server's capacity (default 2.0)
#   --seconds S   simulated seconds (default 60)
#   --seats N     the server's seats (default 8)
#   --seed N      the random seed (default 1)
#   --out FILE    also write the report to FILE
#   --build       rebuild even if the jar exists (after changing grpcops-core or the simulation)
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
}
die() { echo "bench-queue-order: $*" >&2; exit 2; }

FORCE_BUILD=false
OUT=
ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --build) FORCE_BUILD=true; shift ;;
    -h|--help) usage; exit 0 ;;
    --out) [ $# -ge 2 ] || die "$1 needs a value"; OUT=$2; shift 2 ;;
    --flood|--seconds|--seats|--seed)
      [ $# -ge 2 ] || die "$1 needs a value"; ARGS+=("$1" "$2"); shift 2 ;;
    *) usage >&2; die "unknown argument: $1" ;;
  esac
done

JAR=bench-policies/target/grpcops-bench-policies.jar
if $FORCE_BUILD || [ ! -f "$JAR" ]; then
  echo "bench-queue-order: building $JAR (mvn package -DskipTests) ..." >&2
  mvn -B -q -ntp -pl bench-policies -am package -DskipTests >&2
fi

# shellcheck source=lib/machine.sh
. scripts/lib/machine.sh

report() {
  echo "command: scripts/bench-queue-order.sh ${ARGS[*]:-}"
  echo "machine: $(machine_line) (the result does not depend on it)"
  echo "date: $(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo
  for spread in false true; do
    java -cp "$JAR" dev.grpcops.bench.admission.QueueOrderSimulation "${ARGS[@]}" --spread "$spread"
    echo
  done
}
if [ -n "$OUT" ]; then
  report | tee "$OUT"
else
  report
fi
