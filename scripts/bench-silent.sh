#!/usr/bin/env bash
# A node that goes silent (docs/design.md §20), measured: SilentNodeIT at a benchmark's rate. A
# Stock address listed but never answering (its SYNs dropped), one Stock replica of three silent for
# 30 s then healed, one Pricing replica of two silent behind Edge for 15 s then healed, each in a
# network namespace of its own (veth, iptables drops; root only), Checkouts of 5 SKUs with a 1 s
# deadline at a steady rate. Prints, per stretch, the Checkouts sent, complete and their p50 / p99 /
# max, and how long after its network returned the replica served again.
#
#   scripts/bench-silent.sh [--rate 150] [--out FILE]
#
# Builds what it needs first. Needs a quiet machine: every process shares its cores.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/machine.sh
source scripts/lib/machine.sh

RATE=150 OUT=
while [ $# -gt 0 ]; do
  case "$1" in
    --rate) RATE=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-silent: unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "bench-silent: needs root (network namespaces, iptables)" >&2; exit 1; }

report=$(mktemp)
mvn -B -ntp verify -pl system-tests -am -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
  -Dit.test=SilentNodeIT -Dsilent.rate="$RATE" | tee "$report" | grep -E '^silent-node:|Tests run:|BUILD|ERROR' || true
grep -q '^silent-node:' "$report" || { echo "bench-silent: the run failed; see system-tests/target/failsafe-reports" >&2; exit 1; }
if [ -n "$OUT" ]; then
  { echo "- command: \`scripts/bench-silent.sh --rate $RATE\`"
    echo "- machine: $(machine_line)"
    echo "- date: $(date -u +%F), commit $(git rev-parse --short HEAD)"
    grep '^silent-node:' "$report" | sed 's/^/- /'
  } > "$OUT"
fi
rm -f "$report"
