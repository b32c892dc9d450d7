#!/usr/bin/env bash
# The deterministic simulation of the library's mechanisms together (grpcops-core,
# dev.grpcops.simulation), over as many generated seeds as asked: a longer run than the build's 40.
#
#   scripts/simulate.sh [--seeds 1000] [--first-seed 1] [--length 20] [--report]
#
# --seeds: how many seeds, from --first-seed; --length: simulated seconds per seed; --report: print
# each seed's outcomes (how each flow's calls ended, each replica's share, what the mechanisms did).
# A failing seed prints its scenario and the invariant it broke, with the simulated time: rerun it
# alone with --first-seed N --seeds 1, fix the cause, and add N to SimulationTests.REGRESSIONS.
set -euo pipefail
cd "$(dirname "$0")/.."

SEEDS=1000 FIRST=1 LENGTH=20 REPORT=false
while [ $# -gt 0 ]; do
  case "$1" in
    --seeds) SEEDS=$2; shift 2 ;;
    --first-seed) FIRST=$2; shift 2 ;;
    --length) LENGTH=$2; shift 2 ;;
    --report) REPORT=true; shift ;;
    *) sed -n '2,11p' "$0"; exit 2 ;;
  esac
done

mvn -B -q install -pl grpcops-core -am -DskipTests
mvn -B -pl grpcops-core surefire:test -Dtest=SimulationTests -Dsurefire.failIfNoSpecifiedTests=false \
  -Dsimulation.seeds="$SEEDS" -Dsimulation.first-seed="$FIRST" -Dsimulation.length="$LENGTH" \
  -Dsimulation.report="$REPORT" -DforkCount=1
