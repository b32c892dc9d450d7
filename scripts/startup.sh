#!/usr/bin/env bash
# Start to ready, and resident memory once idle, per service: as a jar and as an image, the median
# of several starts (docs/design.md §14). One service at a time, on loopback:
#
#   scripts/startup.sh [--runs 3] [--only stock,pricing,edge,whoami] [--jar-only|--image-only]
#                      [--java PATH] [--java-opts '...'] [--image-suffix TAG] [--aot] [--out FILE]
#
# A start is timed from just before `java -jar` (or `docker run`) to the first health Check that
# answers SERVING, made every 20 ms by `grpcops probe --wait` (started beforehand, so its own JVM
# start is not counted), twice: for "" (the process: its server listens; liveness) and for the
# service's own name (ready: after its warm-up; what readiness probes and Compose wait for).
# Idle RSS: the process's VmRSS 5 s after ready (in a container, its JVM's).
# The jars are started as the images start them (the JVM options of deploy/Dockerfile, sized for
# 512 MiB and one CPU) unless --java-opts says otherwise; the images run with the Compose limits.
# --aot adds, for each, a row started on Spring AOT's beans (-Dspring.aot.enabled=true; in a
# container through JAVA_TOOL_OPTIONS), started in turn with the plain one.
# Prints a Markdown table.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/machine.sh
source scripts/lib/machine.sh

ALL_ARGS="$*"
RUNS=3 ONLY=stock,pricing,edge,whoami MODES="jar image" JAVA_BIN=java JAVA_OPTS_GIVEN= OUT= TAG=latest VARIANTS=plain
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) RUNS=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    --jar-only) MODES=jar; shift ;;
    --image-only) MODES=image; shift ;;
    --java) JAVA_BIN=$2; shift 2 ;;
    --java-opts) JAVA_OPTS_GIVEN=$2; shift 2 ;;
    --image-suffix) TAG=$2; shift 2 ;;
    --aot) VARIANTS="plain aot"; shift ;;
    --out) OUT=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "startup: unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done

CLI=cli/target/grpcops-cli.jar
[ -f "$CLI" ] || { echo "startup: $CLI is missing: mvn -q package -DskipTests -pl cli -am" >&2; exit 2; }
# The JVM options the images run with, unless given.
IMAGE_JAVA_OPTS="$(sed -n 's/^ENV JAVA_OPTS="\(.*\)" \\$/\1/p' deploy/Dockerfile) $(sed -n 's/^ *JAVA_GC="\(.*\)"$/\1/p' deploy/Dockerfile)"
# A jar outside a container sees the whole machine: MaxRAM and ActiveProcessorCount make its JVM size
# itself as in a container limited to 512 MiB and one CPU; the images' CDS archive is not there.
JAR_JAVA_OPTS=${JAVA_OPTS_GIVEN:-$IMAGE_JAVA_OPTS -XX:MaxRAM=512m -XX:ActiveProcessorCount=1}
JAVA_OPTS_RUN=$JAR_JAVA_OPTS

port_of() { case $1 in stock) echo 50061 ;; pricing) echo 50062 ;; edge) echo 50063 ;; whoami) echo 50051 ;; esac; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else print v[int((NR + 1) / 2)] }'; }

health_name() { case $1 in stock) echo chain.v1.Stock ;; pricing) echo chain.v1.Pricing ;; edge) echo chain.v1.Edge ;; whoami) echo grpcops.v1.WhoAmI ;; esac; }

# Waits (in the background) for SERVING on $1, for "" and then for health name $2; prints
# "<epoch ms listening> <epoch ms ready>" once both answered, nothing if either did not.
waiter() {
  local listening
  java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -jar "$CLI" probe "$1" --wait 120s --timeout 1s >/dev/null 2>&1 || return 0
  listening=$(now_ms)
  java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -jar "$CLI" probe "$1" --service "$2" --wait 120s --timeout 1s \
    >/dev/null 2>&1 && echo "$listening $(now_ms)"
}

run_jar() { # service port variant -> "listening_ms ready_ms rss_mb"
  local service=$1 port=$2 jar="$1-service/target/$1-service.jar" log t0 listening ready pid aot=
  [ "$3" = aot ] && aot=-Dspring.aot.enabled=true
  [ -f "$jar" ] || { echo "startup: $jar is missing: mvn -q package -DskipTests" >&2; exit 2; }
  log=$(mktemp)
  exec 3< <(waiter "127.0.0.1:$port" "$(health_name "$service")")
  sleep 2 # the waiter's JVM is up and polling before the clock starts
  t0=$(now_ms)
  # shellcheck disable=SC2086
  "$JAVA_BIN" $JAVA_OPTS_RUN $aot -jar "$jar" --grpc.server.address=127.0.0.1 --grpc.server.port="$port" \
    --management.server.port=0 --grpcops.shutdown.drain-delay=0s >"$log" 2>&1 &
  pid=$!
  read -r listening ready <&3 || ready=
  exec 3<&-
  if [ -z "$ready" ]; then kill "$pid" 2>/dev/null; echo "startup: $service did not serve; log: $log" >&2; exit 1; fi
  sleep 5
  local rss; rss=$(awk '/VmRSS/ { printf "%.0f", $2 / 1024 }' "/proc/$pid/status")
  kill "$pid"; wait "$pid" 2>/dev/null || true
  rm -f "$log"
  echo "$((listening - t0)) $((ready - t0)) $rss"
}

run_image() { # service port variant -> "listening_ms ready_ms rss_mb"
  local service=$1 port=$2 name="grpcops-startup-$1" t0 listening ready aot=()
  [ "$3" = aot ] && aot=(-e JAVA_TOOL_OPTIONS=-Dspring.aot.enabled=true)
  docker rm -f "$name" >/dev/null 2>&1 || true
  exec 3< <(waiter "127.0.0.1:$port" "$(health_name "$service")")
  sleep 2
  t0=$(now_ms)
  docker run -d --name "$name" -p "127.0.0.1:$port:$port" --memory 512m --cpus 1 "${aot[@]}" \
    "grpcops/$service-service:$TAG" --grpcops.shutdown.drain-delay=0s >/dev/null
  read -r listening ready <&3 || ready=
  exec 3<&-
  if [ -z "$ready" ]; then docker logs "$name" | tail -20 >&2; docker rm -f "$name" >/dev/null; exit 1; fi
  sleep 5
  local rss; rss=$(docker exec "$name" sh -c 'awk "/VmRSS/ { printf \"%.0f\", \$2 / 1024 }" /proc/1/status')
  docker rm -f "$name" >/dev/null
  echo "$((listening - t0)) $((ready - t0)) $rss"
}

report="| service | how | listening, ms (median of $RUNS) | ready, ms (median) | ready, all runs | idle RSS, MiB (median) |
|---|---|---:|---:|---|---:|"
for service in ${ONLY//,/ }; do
  port=$(port_of "$service")
  for mode in $MODES; do
    declare -A listens=() times=() rss=()
    for _ in $(seq 1 "$RUNS"); do
      for variant in $VARIANTS; do
        read -r listen ms mb < <("run_$mode" "$service" "$port" "$variant")
        listens[$variant]+="$listen " times[$variant]+="$ms " rss[$variant]+="$mb "
        echo "startup: $service ($mode, $variant): listening $listen ms, ready $ms ms, RSS $mb MiB" >&2
      done
    done
    for variant in $VARIANTS; do
      how=$mode; [ "$variant" = aot ] && how="$mode, Spring AOT"
      report+=$'\n'"| $service | $how | $(printf '%s\n' ${listens[$variant]} | median) | $(printf '%s\n' ${times[$variant]} | median) | ${times[$variant]% } | $(printf '%s\n' ${rss[$variant]} | median) |"
    done
    unset listens times rss
  done
done
header="- command: \`scripts/startup.sh $ALL_ARGS\`
- java (jars): $("$JAVA_BIN" -version 2>&1 | head -1); JVM options: \`${JAVA_OPTS_RUN}\`
- machine: $(machine_line)"
printf '%s\n\n%s\n' "$header" "$report"
[ -z "$OUT" ] || printf '%s\n\n%s\n' "$header" "$report" >"$OUT"
