#!/usr/bin/env bash
# One slow replica must not reach the caller (docs/design.md §13), measured full size: three Stock
# replicas on 127.0.0.2-4, Pricing and Edge as processes, Checkouts of 5 SKUs with a 1 s deadline at
# a steady rate, each fault injected into one Stock replica (none, +200 ms, 200 ms stall per second,
# 50 % UNAVAILABLE; +200 ms on two of the three; and a rolling restart of the three, one after
# another, each SERVING again before the next stops), first with the old client policy (round_robin,
# no ejection, no hedging), then with the defaults (peak-EWMA, outlier detection, hedging). The
# scenarios whose behaviour the TailIT system test asserts, measured (system-tests' TailBench):
#
#   scripts/bench-tail.sh [--rate 200] [--seconds 30] [--warmup 10] [--only new] [--out FILE]
#                         [--scenarios 'healthy,two slow'] [--new-args '--grpcops.client.balancing.compare-all-up-to=0']
#
# --scenarios keeps the scenarios whose names contain one of the comma-separated words; --new-args
# adds service arguments to the defaults' Pricing and Edge (to measure a setting against them).
#
# Prints the Markdown table (p50 / p99 / p99.9, complete answers, Stock calls per Quote) and, per
# scenario, the calls each replica took and the hedges sent, won, lost and throttled. Builds what it
# needs first. Needs a quiet machine: every process shares its cores.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/machine.sh
source scripts/lib/machine.sh

RATE=200 SECONDS_EACH=30 WARMUP=10 POLICIES=old,new OUT= SCENARIOS= NEW_ARGS=
while [ $# -gt 0 ]; do
  case "$1" in
    --rate) RATE=$2; shift 2 ;;
    --seconds) SECONDS_EACH=$2; shift 2 ;;
    --warmup) WARMUP=$2; shift 2 ;;
    --only) POLICIES=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --scenarios) SCENARIOS=$2; shift 2 ;;
    --new-args) NEW_ARGS=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-tail: unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done

rm -f system-tests/target/tail-numbers.md
# Builds what the benchmark needs (the service jars, the CLI, the test classes) and runs TailBench
# alone: no unit test, no other system test, no container test.
mvn -B -ntp verify -pl system-tests -am -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
  -Dit.test=TailBench -Dsystem-tests.fork-timeout=7200 \
  -Dtail.rate="$RATE" -Dtail.seconds="$SECONDS_EACH" -Dtail.warmup="$WARMUP" -Dtail.policies="$POLICIES" \
  -Dtail.scenarios="$SCENARIOS" -Dtail.new-args="$NEW_ARGS" \
  | grep -E '^(old|new) / |^\||^#|BUILD|ERROR' || true
[ -f system-tests/target/tail-numbers.md ] || { echo "bench-tail: the run failed; see system-tests/target/failsafe-reports" >&2; exit 1; }
if [ -n "$OUT" ]; then
  { echo "- command: \`scripts/bench-tail.sh --rate $RATE --seconds $SECONDS_EACH --warmup $WARMUP --only $POLICIES${SCENARIOS:+ --scenarios '$SCENARIOS'}${NEW_ARGS:+ --new-args '$NEW_ARGS'}\`"
    echo "- machine: $(machine_line)"
    cat system-tests/target/tail-numbers.md; } >"$OUT"
  echo "bench-tail: written to $OUT" >&2
fi
