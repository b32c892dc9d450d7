#!/usr/bin/env bash
# Runs the chain locally without Docker: Stock, Pricing and Edge on their default ports
# (gRPC 50061/50062/50063, Actuator 9061/9062/9063), logs in ./logs. Ctrl-C stops all three.
# Builds the jars first if they are missing (or with --build).
set -euo pipefail
cd "$(dirname "$0")/.."

services=(stock-service pricing-service edge-service)
need_build=false
[ "${1:-}" = "--build" ] && need_build=true
for s in "${services[@]}"; do
  [ -f "$s/target/$s.jar" ] || need_build=true
done
if $need_build; then
  mvn -B -q -ntp package -DskipTests -pl "$(IFS=,; echo "${services[*]}")" -am
fi

mkdir -p logs
pids=()
stop() {
  trap - INT TERM EXIT
  echo
  echo "stopping ${services[*]}"
  kill "${pids[@]}" 2>/dev/null || true
  wait "${pids[@]}" 2>/dev/null || true
}
trap stop INT TERM EXIT

for s in "${services[@]}"; do
  java -jar "$s/target/$s.jar" >"logs/$s.log" 2>&1 &
  pids+=($!)
  echo "started $s (pid $!), log: logs/$s.log"
done
echo "edge: 127.0.0.1:50063  pricing: 127.0.0.1:50062  stock: 127.0.0.1:50061  (Ctrl-C stops all three)"
wait -n "${pids[@]}" || true
echo "a service exited; see logs/" >&2
