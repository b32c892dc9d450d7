#!/usr/bin/env bash
# The Compose suite under load, as production runs it (docs/design.md §14): Checkouts of 3 SKUs with
# a 1 s deadline at a steady rate through Edge's published port, then what each container did:
#
#   scripts/bench-compose.sh [--rate 300] [--duration 60s] [--warmup 10s] [--gc SerialGC] [--cpus 1.0]
#                            [--direct] [--stop SERVICES] [--out FILE]
#
# Needs the suite up (scripts/up.sh). Reports the load's p50 / p99 / p99.9 and status counts (from
# `grpcops load`), and per service container its GC pauses over the measured period (count, total,
# longest: jvm_gc_pause_seconds from Prometheus), how often the kernel throttled it at its CPU limit,
# its memory (docker stats) against its limit, and the CPU it used (its cgroup's usage) as a share of
# one core, and how long its threads waited for a core while ready to run (run-queue delay, summed
# over its threads, per second); then the CPU every other container of the suite used, the machine's busy share of all
# its cores, and what ran outside the containers (the load driver, docker-proxy, dockerd).
# --gc G restarts the chain's services with -XX:+UseG (SerialGC, ParallelGC, G1GC, ZGC, ShenandoahGC), or
# with G itself when it starts with "-" (e.g. "-XX:+UseSerialGC -XX:MaxTenuringThreshold=2"), first, and
# --cpus N with that CPU limit (0: none), through a Compose override file, and leaves them so;
# --gc SerialGC --cpus 1.0 (docker-compose.yml's own) puts them back.
# --direct sends to Edge's container address on the Compose network instead of its published port,
# leaving Docker's userland proxy (docker-proxy) out of the measured latency.
# --stop SERVICES (comma-separated, e.g. whoami-1,whoami-2,whoami-3,prometheus) stops those
# containers for the measurement and starts them again after it; without Prometheus the GC columns
# are left empty.
# The load driver runs with BENCH_LOADER_OPTS (default: a small fixed heap and the serial collector,
# so that its own pauses stay out of the tail it measures).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/machine.sh
source scripts/lib/machine.sh

RATE=300 DURATION=60s WARMUP=10s GC= CPUS= OUT= DIRECT= STOP=
ALL_ARGS="$*"
while [ $# -gt 0 ]; do
  case "$1" in
    --rate) RATE=$2; shift 2 ;;
    --duration) DURATION=$2; shift 2 ;;
    --warmup) WARMUP=$2; shift 2 ;;
    --gc) GC=$2; shift 2 ;;
    --cpus) CPUS=$2; shift 2 ;;
    --direct) DIRECT=1; shift ;;
    --stop) STOP=${2//,/ }; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench-compose: unknown argument: $1 (see --help)" >&2; exit 2 ;;
  esac
done

log() { echo "bench-compose: $*" >&2; }
CLI=cli/target/grpcops-cli.jar
[ -f "$CLI" ] || { log "$CLI is missing: mvn -q package -DskipTests -pl cli -am"; exit 2; }
if command -v docker-compose >/dev/null 2>&1; then compose=(docker-compose); else compose=(docker compose); fi
SERVICES="stock-1 stock-2 stock-3 pricing-1 pricing-2 edge"
prom() { # instant query -> the first value, or 0
  curl -fsS --get "http://127.0.0.1:9090/api/v1/query" --data-urlencode "query=$1" \
    | python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)'
}

case $GC in -*) GC_FLAGS=$GC ;; ?*) GC_FLAGS="-XX:+Use$GC" ;; *) GC_FLAGS= ;; esac
if [ -n "$GC$CPUS" ]; then
  override=$(mktemp --suffix=.yml)
  {
    echo "services:"
    for s in $SERVICES; do
      echo "  $s:"
      [ -z "$GC" ] || printf '    environment:\n      JAVA_GC: "%s"\n' "$GC_FLAGS"
      [ -z "$CPUS" ] || printf '    cpus: %s\n' "$CPUS"
    done
  } >"$override"
  log "restarting the chain with${GC:+ $GC_FLAGS}${CPUS:+ cpus $CPUS}"
  "${compose[@]}" -f docker-compose.yml -f "$override" up -d $SERVICES >&2
  rm -f "$override"
  java -jar "$CLI" probe 127.0.0.1:50063 --service chain.v1.Edge --wait 300s --timeout 2s >/dev/null 2>&1 || true
fi
java -jar "$CLI" probe 127.0.0.1:50063 --service chain.v1.Edge --timeout 5s >/dev/null \
  || { log "Edge is not SERVING on 127.0.0.1:50063: scripts/up.sh first"; exit 2; }

# "<throttled periods> <throttled ns> <CPU used ns>" of a service's container, cgroup v2 or v1, read inside it.
cpu() {
  "${compose[@]}" exec -T "$1" sh -c 'cat /sys/fs/cgroup/cpu.stat 2>/dev/null \
      || { cat /sys/fs/cgroup/cpu/cpu.stat; echo usage_ns $(cat /sys/fs/cgroup/cpuacct/cpuacct.usage); }' 2>/dev/null \
    | awk '/^nr_throttled/ { p = $2 } /^throttled_usec/ { t = $2 * 1000 } /^throttled_time/ { t = $2 }
           /^usage_usec/ { u = $2 * 1000 } /^usage_ns/ { u = $2 } END { print p + 0, t + 0, u + 0 }'
}
# Nanoseconds the threads of a service's main process have waited for a core while ready to run
# (the run-queue delay of /proc/<pid>/task/*/schedstat), read on the host.
run_queue_wait() {
  local pid
  pid=$(docker inspect -f '{{.State.Pid}}' "$("${compose[@]}" ps -q "$1")" 2>/dev/null) || { echo 0; return; }
  cat /proc/"$pid"/task/*/schedstat 2>/dev/null | awk '{ s += $2 } END { print s + 0 }'
}
sample() { echo "$(cpu "$1") $(run_queue_wait "$1")"; }
# "<busy jiffies> <all jiffies> <stolen jiffies>" of the machine, all CPUs. On a virtual machine the
# hypervisor's stolen time is CPU the machine's threads were ready for and did not get.
host_cpu() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9, $9 }' /proc/stat; }
declare -A CPU_BEFORE

if [ -n "$STOP" ]; then
  log "stopping $STOP for the measurement"
  "${compose[@]}" stop $STOP >&2
  trap 'log "starting $STOP again"; "${compose[@]}" start $STOP >&2' EXIT
fi

seconds() { local d=$1; case $d in *ms) echo 0 ;; *s) echo "${d%s}" ;; *m) echo $(( ${d%m} * 60 )) ;; *) echo "$d" ;; esac; }
window=$(( $(seconds "$DURATION") ))
read -r -a LOADER <<<"${BENCH_LOADER_OPTS:--XX:+UseSerialGC -Xms256m -Xmx256m}"
TARGET=127.0.0.1:50063
if [ -n "$DIRECT" ]; then
  edge_ip=$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$("${compose[@]}" ps -q edge)")
  TARGET=$edge_ip:50063
fi
log "warm-up $WARMUP, then $DURATION at $RATE Checkouts/s to $TARGET"
java "${LOADER[@]}" -jar "$CLI" load "$TARGET" --method Checkout --data '{"skus":["a","b","c"]}' --rate "$RATE" \
  --duration "$WARMUP" --deadline 1s --connections 4 --json >/dev/null
RUNNING=$("${compose[@]}" ps --services --filter status=running | tr '\n' ' ')
for s in $RUNNING; do CPU_BEFORE[$s]=$(sample "$s"); done
HOST_BEFORE=$(host_cpu) START_NS=$(date +%s%N)
report=$(java "${LOADER[@]}" -jar "$CLI" load "$TARGET" --method Checkout --data '{"skus":["a","b","c"]}' --rate "$RATE" \
  --duration "$DURATION" --deadline 1s --connections 4 --json)
HOST_AFTER=$(host_cpu) END_NS=$(date +%s%N)
declare -A CPU_AFTER
for s in $RUNNING; do CPU_AFTER[$s]=$(sample "$s"); done
# The share of one core a container used over the measured period.
core_share() {
  awk -v b="${CPU_BEFORE[$1]:-0 0 0 0}" -v a="${CPU_AFTER[$1]:-0 0 0 0}" -v ns=$((END_NS - START_NS)) \
    'BEGIN { split(b, x, " "); split(a, y, " "); printf "%.0f", 100 * (y[3] - x[3]) / ns }'
}
containers_share=0 others=
for s in $RUNNING; do
  containers_share=$((containers_share + $(core_share "$s")))
  case " $SERVICES " in *" $s "*) ;; *) others+="${others:+, }$s $(core_share "$s") %" ;; esac
done
read -r host_share stolen_share < <(awk -v b="$HOST_BEFORE" -v a="$HOST_AFTER" -v n="$(nproc)" \
  'BEGIN { split(b, x, " "); split(a, y, " "); all = y[2] - x[2]
           printf "%.0f %.0f\n", 100 * n * (y[1] - x[1]) / all, 100 * n * (y[3] - x[3]) / all }')
prometheus_up=1
curl -fsS -o /dev/null "http://127.0.0.1:9090/-/ready" 2>/dev/null || prometheus_up=
sleep 16 # one scrape interval past the end, so Prometheus has the last of it
read -r p50 p99 p999 statuses < <(python3 -c 'import json,sys; r=json.loads(sys.argv[1]); l=r["latency_ms"]
print(l["p50"], l["p99"], l["p999"], ",".join(f"{k}={v}" for k, v in sorted(r["status"].items())))' "$report")

table="| container | CPU, % of a core | waited for a core, ms per s | GC pauses | pause total ms | longest pause ms (2 min before the end) | throttled periods | throttled ms | memory used | of the limit |
|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
stats=$(docker stats --no-stream --format '{{.Name}} {{.MemUsage}} {{.MemPerc}}')
for s in $SERVICES; do
  inst="$s:$(case $s in stock*) echo 9061 ;; pricing*) echo 9062 ;; edge) echo 9063 ;; esac)"
  count=- total=- longest=-
  [ -z "$prometheus_up" ] || {
  count=$(prom "sum(increase(jvm_gc_pause_seconds_count{instance=\"$inst\"}[${window}s]))")
  total=$(prom "sum(increase(jvm_gc_pause_seconds_sum{instance=\"$inst\"}[${window}s])) * 1000")
  longest=$(prom "max(max_over_time(jvm_gc_pause_seconds_max{instance=\"$inst\"}[${window}s])) * 1000")
  count=$(printf '%.0f' "$count") total=$(printf '%.0f' "$total") longest=$(printf '%.1f' "$longest")
  }
  mem=$(echo "$stats" | awk -v n="$s" '$1 ~ n"-1$" || $1 ~ "_"n"_1$" || $1 == n { print $2, $5; exit }')
  read -r periods throttled_ms waited < <(awk -v b="${CPU_BEFORE[$s]:-0 0 0 0}" -v a="${CPU_AFTER[$s]:-0 0 0 0}" \
    -v s=$(( (END_NS - START_NS) / 1000000000 )) \
    'BEGIN { split(b, x, " "); split(a, y, " "); printf "%d %.0f %.0f\n", y[1] - x[1], (y[2] - x[2]) / 1e6, (y[4] - x[4]) / 1e6 / s }')
  table+=$'\n'"| $s | $(core_share "$s") | $waited | $count | $total | $longest | $periods | $throttled_ms | ${mem% *} | ${mem#* } |"
done
out="- command: \`scripts/bench-compose.sh $ALL_ARGS\`
- machine: $(machine_line); GC: ${GC:-SerialGC (the images default)}; CPU limit: ${CPUS:-1.0 (as docker-compose.yml)}
- CPU over the measured period, % of one core: the machine $host_share of $((100 * $(nproc))), and $stolen_share taken by the hypervisor (steal); the suite's containers $containers_share; outside them (load driver, docker-proxy, dockerd) $((host_share - containers_share)); other containers: ${others:-none}${STOP:+ (stopped: $STOP)}
- load: $RATE Checkouts/s of 3 SKUs to $TARGET${DIRECT:+ (the Edge container address)}, 1 s deadline, $DURATION after $WARMUP of warm-up: p50 $p50 ms, p99 $p99 ms, p99.9 $p999 ms; statuses $statuses

$table"
echo "$out"
[ -z "$OUT" ] || echo "$out" >"$OUT"
