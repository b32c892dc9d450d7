#!/usr/bin/env bash
# The design §6 lab on one machine: three whoami pods w1..w3 on 127.0.0.2, .3, .4 (gRPC 50051,
# Actuator 9051), and HAProxy in TCP mode on 127.0.0.1:50050 playing the ClusterIP.
# Env: MAX_CONNECTION_AGE_MS (passed to the pods), GRPCOPS_ADMIN_TOKEN (default: a random one, made
# for this run and printed; a placeholder or fewer than 16 characters stops the pods at start).
# Ctrl-C stops everything. Logs in ./logs.
set -euo pipefail
cd "$(dirname "$0")/.."

jar=whoami-service/target/whoami-service.jar
[ -f "$jar" ] && [ -f cli/target/grpcops-cli.jar ] || mvn -B -q -ntp package -DskipTests -pl whoami-service,cli -am
if [ -z "${GRPCOPS_ADMIN_TOKEN:-}" ]; then
  GRPCOPS_ADMIN_TOKEN=$(openssl rand -hex 32 2>/dev/null || od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
fi
export GRPCOPS_ADMIN_TOKEN

mkdir -p logs
pids=()
stop() {
  trap - INT TERM EXIT
  kill "${pids[@]}" 2>/dev/null || true
  wait "${pids[@]}" 2>/dev/null || true
}
trap stop INT TERM EXIT

for i in 1 2 3; do
  POD_NAME="w$i" java -jar "$jar" --grpc.server.address="127.0.0.$((i + 1))" --grpc.server.port=50051 \
    --management.server.address="127.0.0.$((i + 1))" --management.server.port=9051 >"logs/whoami-w$i.log" 2>&1 &
  pids+=($!)
done

if command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ]; then
  cat >logs/haproxy-lab.cfg <<CFG
defaults
  mode tcp
  timeout connect 2s
  timeout client 60s
  timeout server 60s
frontend clusterip
  bind 127.0.0.1:50050
  default_backend pods
backend pods
  balance roundrobin
  server w1 127.0.0.2:50051
  server w2 127.0.0.3:50051
  server w3 127.0.0.4:50051
CFG
  "$(command -v haproxy || echo /usr/sbin/haproxy)" -db -f logs/haproxy-lab.cfg >logs/haproxy-lab.log 2>&1 &
  pids+=($!)
else
  echo "haproxy not installed (scripts/install-deps.sh): no ClusterIP stand-in on 127.0.0.1:50050" >&2
fi

cli="java -jar cli/target/grpcops-cli.jar"
for i in 1 2 3; do
  until $cli probe "127.0.0.$((i + 1)):50051" >/dev/null 2>&1; do
    if ! kill -0 "${pids[$((i - 1))]}" 2>/dev/null; then
      echo "whoami w$i exited at start; logs/whoami-w$i.log:" >&2
      tail -n 25 "logs/whoami-w$i.log" >&2
      exit 1
    fi
    sleep 0.5
  done
done
cat <<TXT
lab up: pods 127.0.0.2:50051 (w1), 127.0.0.3:50051 (w2), 127.0.0.4:50051 (w3); ClusterIP 127.0.0.1:50050
admin token: GRPCOPS_ADMIN_TOKEN=$GRPCOPS_ADMIN_TOKEN
try:
  $cli spread 127.0.0.1:50050
  $cli spread 127.0.0.2:50051,127.0.0.3:50051,127.0.0.4:50051 --config rr
  GRPCOPS_ADMIN_TOKEN=$GRPCOPS_ADMIN_TOKEN $cli drain 127.0.0.3:50051
  $cli spread 127.0.0.2:50051,127.0.0.3:50051,127.0.0.4:50051 --config hc
Ctrl-C stops the lab.
TXT
wait -n "${pids[@]}" || true
