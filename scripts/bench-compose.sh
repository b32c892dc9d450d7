#!/usr/bin/env bash
# The Compose suite under load, as production runs it (docs/design.md §14): Checkouts of 3 SKUs with
# a 1 s deadline at a steady rate through Edge's published port, then what each container did:
#
#   scripts/bench-compose.sh [--rate 300] [--duration 60s] [--warmup 10s] [--gc SerialGC] [--cpus 1.0]
#                            [--direct] [--out FILE]
#
# Needs the suite up (scripts/up.sh). Reports the load's p50 / p99 / p99.9 and status counts (from
# `grpcops load`), and per service container its GC pauses over the measured period (count, total,
# longest: jvm_gc_pause_seconds from Prometheus), how often the kernel throttled it at its CPU limit,
# and its memory (docker stats) against its limit.
# --gc G restarts the chain's services with -XX:+UseG (SerialGC, ParallelGC, G1GC, ZGC) first, and
# --cpus N with that CPU limit (0: none), through a Compose override file, and leaves them so;
# --gc SerialGC --cpus 1.0 (docker-compose.yml's own) puts them back.
# --direct sends to Edge's container address on the Compose network instead of its published port,
# leaving Docker's userland proxy (docker-proxy) out of the measured latency.
# The load driver runs with BENCH_LOADER_OPTS (default: a small fixed heap and the serial collector,
# so that its own pauses stay out of the tail it measures).
set -euo pipefail
cd "$(dirname "$0")/.."

RATE=300 DURATION=60s WARMUP=10s GC= CPUS= OUT= DIRECT=
ALL_ARGS="$*"
while [ $# -gt 0 ]; do
  case "$1" in
    --rate) RATE=$2; shift 2 ;;
    --duration) DURATION=$2; shift 2 ;;
    --warmup) WARMUP=$2; shift 2 ;;
    --gc) GC=$2; shift 2 ;;
    --cpus) CPUS=$2; shift 2 ;;
    --direct) DIRECT=1; shift ;;
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

if [ -n "$GC$CPUS" ]; then
  override=$(mktemp --suffix=.yml)
  {
    echo "services:"
    for s in $SERVICES; do
      echo "  $s:"
      [ -z "$GC" ] || printf '    environment:\n      JAVA_GC: "-XX:+Use%s"\n' "$GC"
      [ -z "$CPUS" ] || printf '    cpus: %s\n' "$CPUS"
    done
  } >"$override"
  log "restarting the chain with${GC:+ -XX:+Use$GC}${CPUS:+ cpus $CPUS}"
  "${compose[@]}" -f docker-compose.yml -f "$override" up -d $SERVICES >&2
  rm -f "$override"
  java -jar "$CLI" probe 127.0.0.1:50063 --service chain.v1.Edge --wait 300s --timeout 2s >/dev/null 2>&1 || true
fi
java -jar "$CLI" probe 127.0.0.1:50063 --service chain.v1.Edge --timeout 5s >/dev/null \
  || { log "Edge is not SERVING on 127.0.0.1:50063: scripts/up.sh first"; exit 2; }

# "<throttled periods> <throttled ns>" of a service's container, cgroup v2 or v1, read inside it.
throttled() {
  "${compose[@]}" exec -T "$1" sh -c 'cat /sys/fs/cgroup/cpu.stat 2>/dev/null || cat /sys/fs/cgroup/cpu/cpu.stat' 2>/dev/null \
    | awk '/^nr_throttled/ { p = $2 } /^throttled_usec/ { t = $2 * 1000 } /^throttled_time/ { t = $2 } END { print p + 0, t + 0 }'
}
declare -A THROTTLED_BEFORE

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
for s in $SERVICES; do THROTTLED_BEFORE[$s]=$(throttled "$s"); done
report=$(java "${LOADER[@]}" -jar "$CLI" load "$TARGET" --method Checkout --data '{"skus":["a","b","c"]}' --rate "$RATE" \
  --duration "$DURATION" --deadline 1s --connections 4 --json)
sleep 16 # one scrape interval past the end, so Prometheus has the last of it
read -r p50 p99 p999 statuses < <(python3 -c 'import json,sys; r=json.loads(sys.argv[1]); l=r["latency_ms"]
print(l["p50"], l["p99"], l["p999"], ",".join(f"{k}={v}" for k, v in sorted(r["status"].items())))' "$report")

table="| container | GC pauses | pause total ms | longest pause ms (2 min before the end) | throttled periods | throttled ms | memory used | of the limit |
|---|---:|---:|---:|---:|---:|---:|---:|"
stats=$(docker stats --no-stream --format '{{.Name}} {{.MemUsage}} {{.MemPerc}}')
for s in $SERVICES; do
  inst="$s:$(case $s in stock*) echo 9061 ;; pricing*) echo 9062 ;; edge) echo 9063 ;; esac)"
  count=$(prom "sum(increase(jvm_gc_pause_seconds_count{instance=\"$inst\"}[${window}s]))")
  total=$(prom "sum(increase(jvm_gc_pause_seconds_sum{instance=\"$inst\"}[${window}s])) * 1000")
  longest=$(prom "max(max_over_time(jvm_gc_pause_seconds_max{instance=\"$inst\"}[${window}s])) * 1000")
  mem=$(echo "$stats" | awk -v n="$s" '$1 ~ n"-1$" || $1 ~ "_"n"_1$" || $1 == n { print $2, $5; exit }')
  read -r periods throttled_ms < <(throttled "$s" | awk -v b="${THROTTLED_BEFORE[$s]:-0 0}" \
    'BEGIN { split(b, a, " ") } { printf "%d %.0f\n", $1 - a[1], ($2 - a[2]) / 1e6 }')
  table+=$'\n'"| $s | $(printf '%.0f' "$count") | $(printf '%.0f' "$total") | $(printf '%.1f' "$longest") | $periods | $throttled_ms | ${mem% *} | ${mem#* } |"
done
out="- command: \`scripts/bench-compose.sh $ALL_ARGS\`
- machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg); GC: ${GC:-SerialGC (the images default)}; CPU limit: ${CPUS:-1.0 (as docker-compose.yml)}
- load: $RATE Checkouts/s of 3 SKUs to $TARGET${DIRECT:+ (the Edge container address)}, 1 s deadline, $DURATION after $WARMUP of warm-up: p50 $p50 ms, p99 $p99 ms, p99.9 $p999 ms; statuses $statuses

$table"
echo "$out"
[ -z "$OUT" ] || echo "$out" >"$OUT"
