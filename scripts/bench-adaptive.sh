#!/usr/bin/env bash
# Adaptive seats (docs/overload.md, "Adaptive seats"), measured: the chain as processes, a flood of
# Checkouts beside a polite caller (20/s, 1 s deadline), while the load and Stock's capacity change
# (the flood's first 10 s, steady, every Stock answer held 200 ms by a fault delay, the delay off again,
# Stock spending 1 ms more CPU on every call by fault work, the work off again); first with fixed seats (the defaults), then
# with grpcops.admission.adaptive.enabled=true and nothing else tuned (system-tests' AdaptiveSeatsBench).
#
#   scripts/bench-adaptive.sh [--seconds 20] [--inflight 1000] [--only 'fixed,adaptive,adaptive at Edge']
#                             [--flood-deadline-ms 0] [--out FILE]
#
# --only: a comma-separated subset of the contenders, and also 'fixed in arrival order' (fixed seats,
# every queue first come first served and no answer at dequeue: earliest deadline first's counterpart).
# --flood-deadline-ms: each of the flood's Checkouts with this deadline (none by default).
#
# Prints the Markdown table: per phase, the polite caller's complete share, latency and other
# outcomes, each hop's seats sampled every second, its rejections by reason and the calls it
# answered after their deadline. Builds what it needs first. Needs a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/machine.sh
source scripts/lib/machine.sh

SECONDS_EACH=20 INFLIGHT=1000 ONLY='fixed,adaptive,adaptive at Edge' FLOOD_DEADLINE_MS=0 OUT=
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) SECONDS_EACH=$2; shift 2 ;;
    --inflight) INFLIGHT=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    --flood-deadline-ms) FLOOD_DEADLINE_MS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-adaptive: unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done

rm -f system-tests/target/adaptive-numbers.md
mvn -B -ntp verify -pl system-tests -am -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
  -Dit.test=AdaptiveSeatsBench -Dsystem-tests.fork-timeout=3600 \
  -Dadaptive.seconds="$SECONDS_EACH" -Dadaptive.inflight="$INFLIGHT" -Dadaptive.contenders="$ONLY" \
  -Dadaptive.flood-deadline-ms="$FLOOD_DEADLINE_MS" \
  | grep -E '^\||BUILD|ERROR' || true
[ -f system-tests/target/adaptive-numbers.md ] || { echo "bench-adaptive: the run failed; see system-tests/target/failsafe-reports" >&2; exit 1; }
if [ -n "$OUT" ]; then
  only_arg=
  [ "$ONLY" = 'fixed,adaptive,adaptive at Edge' ] || only_arg=" --only '$ONLY'"
  [ "$FLOOD_DEADLINE_MS" = 0 ] || only_arg="$only_arg --flood-deadline-ms $FLOOD_DEADLINE_MS"
  { echo "- command: \`scripts/bench-adaptive.sh --seconds $SECONDS_EACH --inflight $INFLIGHT$only_arg\`"
    echo "- machine: $(machine_line)"
    echo "- date: $(date -u +%Y-%m-%d)"
    cat system-tests/target/adaptive-numbers.md; } >"$OUT"
  echo "bench-adaptive: written to $OUT" >&2
fi
