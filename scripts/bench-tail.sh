#!/usr/bin/env bash
# One slow replica must not reach the caller (docs/design.md §13), measured full size: three Stock
# replicas on 127.0.0.2-4, Pricing and Edge as processes, Checkouts of 5 SKUs with a 1 s deadline at
# a steady rate, each fault injected into one Stock replica (none, +200 ms, 200 ms stall per second,
# 50 % UNAVAILABLE), first with the old client policy (round_robin, no ejection, no hedging), then
# with the defaults (peak-EWMA, outlier detection, hedging). The same scenarios as the TailTests
# system test, longer and at a higher rate:
#
#   scripts/bench-tail.sh [--rate 200] [--seconds 30] [--warmup 10] [--only new] [--out FILE]
#
# Prints the Markdown table (p50 / p99 / p99.9, complete answers, Stock calls per Quote) and, per
# scenario, the calls each replica took and the hedges sent, won, lost and throttled. Builds the jars
# if they are missing. Needs a quiet machine: every process shares its cores.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/machine.sh
source scripts/lib/machine.sh

RATE=200 SECONDS_EACH=30 WARMUP=10 POLICIES=old,new OUT=
while [ $# -gt 0 ]; do
  case "$1" in
    --rate) RATE=$2; shift 2 ;;
    --seconds) SECONDS_EACH=$2; shift 2 ;;
    --warmup) WARMUP=$2; shift 2 ;;
    --only) POLICIES=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-tail: unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done

for jar in stock-service pricing-service edge-service; do
  if [ ! -f "$jar/target/$jar.jar" ]; then
    echo "bench-tail: building the jars (mvn package -DskipTests)" >&2
    mvn -B -q -ntp package -DskipTests -pl stock-service,pricing-service,edge-service -am >&2
    break
  fi
done

rm -f system-tests/target/tail-numbers.md
mvn -B -ntp verify -pl system-tests -Dtest=TailTests -Dsurefire.failIfNoSpecifiedTests=false \
  -Dtail.rate="$RATE" -Dtail.seconds="$SECONDS_EACH" -Dtail.warmup="$WARMUP" -Dtail.policies="$POLICIES" \
  | grep -E '^(old|new) / |^\||^#' || true
[ -f system-tests/target/tail-numbers.md ] || { echo "bench-tail: the run failed; see system-tests/target/surefire-reports" >&2; exit 1; }
if [ -n "$OUT" ]; then
  { echo "- command: \`scripts/bench-tail.sh --rate $RATE --seconds $SECONDS_EACH --warmup $WARMUP --only $POLICIES\`"
    echo "- machine: $(machine_line)"
    cat system-tests/target/tail-numbers.md; } >"$OUT"
  echo "bench-tail: written to $OUT" >&2
fi
