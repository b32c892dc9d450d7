#!/usr/bin/env bash
# The chain's throughput against the same chain written by hand in plain grpc-java (design §12),
# side by side in one run on this machine:
#
#   scripts/bench.sh [--duration 20s] [--warmup 90s] [--concurrency 64 | --rate N] [--deadline D] [--skus 3] [--out FILE]
#                    [--connections 8] [--rounds 1] [--only a,b,c] [--build]
#
# Contenders, one after another, each as three processes on loopback:
#   (a) the hand-written chain (bench/, plain grpc-java, direct executors)   ports 52071-52073
#   (b) the suite (stock-service, pricing-service, edge-service jars)        ports 52061-52063 (+ management 52064-52066)
#       at its defaults: budgets, admission, health checking and metrics on
#   (c) the suite with the budget layer off (--grpcops.budget.enabled=false)
#   (d) the suite with admission off (--grpcops.admission.enabled=false): (d) against (b) is
#       what fair admission costs when nothing is overloaded
# For each: start, wait until it answers (bounded), warm up, drive Edge/Checkout with
# {"skus":["a","b","c"]} (delay 0) at a fixed concurrency, measure Checkouts/s, p50/p99, the CPU
# seconds the three processes spent per 1000 Checkouts (utime+stime from /proc/<pid>/stat) and their
# context switches per Checkout (/proc/<pid>/task/*/status: steadier than Checkouts/s), stop.
# Prints a Markdown table (and writes it to FILE with --out). The ratios are the result: absolute
# numbers vary by machine.
#
# Load driver: `grpcops load` (cli/target/grpcops-cli.jar) when the CLI has it, else h2load (which
# reads HTTP status only, not grpc-status; the output says so).
#
# Options:
#   --duration D     measured period (default 20s; N, Ns or Nm)
#   --warmup D       warm-up before it, same load (default 90s: under this load the JIT compiler
#                    is busy for the first 60-90 s on two cores, and a shorter one measures it)
#   --concurrency N  Checkouts in flight at once (default 64)
#   --rate N         instead: N Checkouts started per second whatever the answers (an open loop),
#                    for what each Checkout costs at a steady rate below saturation (CPU s / 1000
#                    is the figure then, not Checkouts/s); needs grpcops load
#   --connections N  connections to Edge the calls are spread over (default 8)
#   --deadline D     each Checkout's deadline (default: none, so every hop uses its 2 s default
#                    budget); with it the report adds OK/s, the Checkouts answered OK in time per
#                    second: past capacity, in an open loop, that is the figure; needs grpcops load
#   --skus N         SKUs per Checkout (default 3: a, b, c)
#   --out FILE       also write the report to FILE
#   --rounds N       run the contenders N times, interleaved, every other round in reverse
#                    (a b c c b a a b c ...), and report the median of each number and each
#                    round's Checkouts/s: steadier on a machine others use (default 1)
#   --only LIST      run only these contenders, e.g. --only a,b (default: all that are configured)
#   --build          rebuild the jars even if they exist (default: build only what is missing)
#   --otlp-sink PORT run an OTLP/HTTP trace receiver on 127.0.0.1:PORT that counts and drops the
#                    spans (bench jar's otlp-sink), for a contender that exports traces, e.g.
#                    BENCH_VARIANT='--management.otlp.tracing.endpoint=http://127.0.0.1:4318/v1/traces'
#                    scripts/bench.sh --otlp-sink 4318 --only b,e ; the report says how many spans
#                    each contender sent per Checkout
# Environment:
#   BENCH_JAVA_OPTS       JVM options for all nine server processes (default: none)
#   BENCH_START_TIMEOUT   seconds a contender may take to answer after start (default 300)
#   BENCH_DRIVER          force the load driver: grpcops | h2load
#   BENCH_KEEP_LOGS=1     keep the run's logs and driver output (kept anyway when a contender fails)
#   BENCH_JFR=DIR         record each server's measured period with JFR into
#                         DIR/<contender>-round-<n>-<server>.jfr (the JDK's default settings: CPU and
#                         allocation samples; BENCH_JFR_SETTINGS=profile for more). On this 2-core
#                         machine recording cut the suite's saturated throughput 8-16 times and
#                         tripled the CPU per Checkout at 300/s, whichever settings: read where the
#                         samples fall, never the run's numbers
#   BENCH_PROFILE=DIR     sample each server's CPU with async-profiler (every 2 ms of CPU, attached
#                         after the warm-up, detached before the measured period ends) into
#                         DIR/<contender>-round-<n>-<server>.collapsed (flame-graph input), and
#                         where each server's samples fell into DIR/<contender>-round-<n>.md
#                         (scripts/lib/profile_summary.py). Costs the
#                         run a few % here, not JFR's 8-16 times. The profiler is async-profiler's
#                         jar from the Maven repositories this machine is configured for
#                         (tools.profiler:async-profiler, BENCH_ASYNC_PROFILER=path/libasyncProfiler.so
#                         to use another)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
# shellcheck source=scripts/lib/machine.sh
source scripts/lib/machine.sh

# ---------------------------------------------------------------------------------------------
# (e) the suite with other arguments, to measure what one setting costs or buys in the same run:
# BENCH_VARIANT='--grpc.metricsA66Enabled=true --grpcops.server.direct-executor=false' scripts/bench.sh
# or with the jars of another build, to measure a code change before and after in the same run:
# BENCH_VARIANT_JARS=/tmp/before scripts/bench.sh  (a directory holding stock-service.jar,
# pricing-service.jar and edge-service.jar, e.g. copied from the target/ directories before the change)
read -r -a VARIANT_ARGS <<<"${BENCH_VARIANT:-}"
VARIANT_JARS=${BENCH_VARIANT_JARS:-}
if [ -n "$VARIANT_JARS" ]; then
  for jar in stock-service pricing-service edge-service; do
    [ -f "$VARIANT_JARS/$jar.jar" ] || { echo "bench: BENCH_VARIANT_JARS: no $jar.jar in $VARIANT_JARS" >&2; exit 2; }
  done
fi
# ---------------------------------------------------------------------------------------------

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
}
die() { echo "bench: $*" >&2; exit 2; }

seconds_of() { # 20s | 20 | 1m -> whole seconds
  local v=$1
  case "$v" in
    *[!0-9smh]* | "" ) return 1 ;;
  esac
  if [[ $v =~ ^([0-9]+)s?$ ]]; then echo "${BASH_REMATCH[1]}"
  elif [[ $v =~ ^([0-9]+)m$ ]]; then echo $(( BASH_REMATCH[1] * 60 ))
  else return 1
  fi
}

DURATION=20 WARMUP=90 CONCURRENCY=64 RATE="" DEADLINE="" CONNECTIONS=8 ROUNDS=1 SKUS=3 OUT="" ONLY="" FORCE_BUILD=false SINK_PORT=""
COMMAND="scripts/bench.sh"
for a in "$@"; do
  if [[ $a =~ ^[A-Za-z0-9_./:=,@%+-]+$ ]]; then COMMAND+=" $a"; else COMMAND+=" $(printf '%q' "$a")"; fi
done
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) [ $# -ge 2 ] || die "--duration needs a value"; DURATION=$(seconds_of "$2") || die "--duration: not a duration: $2 (e.g. 20s)"; shift 2 ;;
    --warmup) [ $# -ge 2 ] || die "--warmup needs a value"; WARMUP=$(seconds_of "$2") || die "--warmup: not a duration: $2 (e.g. 10s)"; shift 2 ;;
    --concurrency) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || die "--concurrency needs a positive number"; CONCURRENCY=$2; shift 2 ;;
    --rate) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || die "--rate needs a positive number"; RATE=$2; shift 2 ;;
    --deadline) [[ ${2:-} =~ ^[1-9][0-9]*(ms|s|m)?$ ]] || die "--deadline: not a duration: ${2:-} (e.g. 1s, 500ms)"; DEADLINE=$2; [[ $2 =~ [sm]$ ]] || DEADLINE+=s; shift 2 ;;
    --rounds) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || die "--rounds needs a positive number"; ROUNDS=$2; shift 2 ;;
    --connections) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || die "--connections needs a positive number"; CONNECTIONS=$2; shift 2 ;;
    --skus) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] && [ "$2" -le 100 ] || die "--skus needs a number 1-100"; SKUS=$2; shift 2 ;;
    --out) [ -n "${2:-}" ] || die "--out needs a file"; OUT=$2; shift 2 ;;
    --only) [[ ${2:-} =~ ^[abcde](,[abcde])*$ ]] || die "--only needs a list like a,b,c"; ONLY=$2; shift 2 ;;
    --build) FORCE_BUILD=true; shift ;;
    --otlp-sink) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] && [ "$2" -le 65535 ] || die "--otlp-sink needs a port"; SINK_PORT=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument: $1" ;;
  esac
done
[ "$DURATION" -ge 1 ] || die "--duration must be at least 1s"
command -v python3 >/dev/null || die "python3 is needed to compute the results"

# ----------------------------------------------------------------------------- build
CLI_JAR=cli/target/grpcops-cli.jar
BENCH_JAR=bench/target/grpcops-bench.jar
JARS=(stock-service/target/stock-service.jar pricing-service/target/pricing-service.jar
      edge-service/target/edge-service.jar "$CLI_JAR" "$BENCH_JAR")
need_build=$FORCE_BUILD
for j in "${JARS[@]}"; do [ -f "$j" ] || need_build=true; done
if $need_build; then
  echo "bench: building the jars (mvn package -DskipTests) ..." >&2
  mvn -B -q -ntp package -DskipTests -pl stock-service,pricing-service,edge-service,cli,bench -am >&2
fi

# ----------------------------------------------------------------------------- load driver
if [ -n "${BENCH_DRIVER:-}" ]; then
  DRIVER=$BENCH_DRIVER
elif java -jar "$CLI_JAR" load --help 2>&1 | grep -q -- '--concurrency'; then
  DRIVER=grpcops
else
  DRIVER=h2load
fi
case "$DRIVER" in
  grpcops) ;;
  h2load) command -v h2load >/dev/null || die "no load driver: the CLI has no 'load' command yet and h2load is not installed" ;;
  *) die "BENCH_DRIVER must be grpcops or h2load" ;;
esac
[ -z "$DEADLINE" ] || [ "$DRIVER" = grpcops ] || die "--deadline needs grpcops load"
if [ -n "$RATE" ]; then
  [ "$DRIVER" = grpcops ] || die "--rate needs grpcops load (h2load has no open loop here)"
  # An open loop: at most 4 s of calls outstanding before the driver counts one as its own overload.
  LOAD_SHAPE=(--rate "$RATE" --max-outstanding $((RATE * 4 > 64 ? RATE * 4 : 64)))
  SHAPE_TEXT="$RATE Checkouts/s"
else
  LOAD_SHAPE=(--concurrency "$CONCURRENCY")
  SHAPE_TEXT="concurrency $CONCURRENCY"
fi

# ----------------------------------------------------------------------------- the request
SKU_LIST=()
for ((i = 0; i < SKUS; i++)); do
  if [ $i -lt 26 ]; then SKU_LIST+=("$(printf "\\x$(printf %x $((97 + i)))")"); else SKU_LIST+=("sku$i"); fi
done
DATA=$(python3 -c 'import json,sys; print(json.dumps({"skus": sys.argv[1:]}, separators=(",", ":")))' "${SKU_LIST[@]}")

RUN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/grpcops-bench.XXXXXX")
if [ -n "${BENCH_PROFILE:-}" ]; then
  mkdir -p "$BENCH_PROFILE"
  PROFILE_DIR=$(cd "$BENCH_PROFILE" && pwd)
  ASYNC_PROFILER=${BENCH_ASYNC_PROFILER:-}
  if [ -z "$ASYNC_PROFILER" ]; then
    ap_version=4.2
    ap_jar="$HOME/.m2/repository/tools/profiler/async-profiler/$ap_version/async-profiler-$ap_version-linux-x64.jar"
    [ -f "$ap_jar" ] || mvn -B -q -ntp dependency:get -Dtransitive=false \
      -Dartifact="tools.profiler:async-profiler:$ap_version:jar:linux-x64" >&2
    (cd "$RUN_DIR" && unzip -q -o "$ap_jar" 'linux-x64/*')
    ASYNC_PROFILER="$RUN_DIR/linux-x64/libasyncProfiler.so"
  fi
  [ -f "$ASYNC_PROFILER" ] || { echo "bench: BENCH_PROFILE: no async-profiler at $ASYNC_PROFILER" >&2; exit 2; }
fi
# h2load sends raw bytes: one length-prefixed gRPC message (0x00, 4-byte big-endian length,
# the CheckoutRequest: field 1 (skus) is tag 0x0a, length, UTF-8 bytes).
python3 - "$RUN_DIR/body.bin" "${SKU_LIST[@]}" <<'PY'
import struct, sys
msg = b"".join(b"\x0a" + bytes([len(s.encode())]) + s.encode() for s in sys.argv[2:])
open(sys.argv[1], "wb").write(b"\x00" + struct.pack(">I", len(msg)) + msg)
PY

# ----------------------------------------------------------------------------- processes
PIDS=()          # every process of the contender currently running
SAMPLER_PID=""
DRIVER_PID=""
SINK_PID=""
stop_pids() {    # SIGTERM, up to 20 s, then SIGKILL
  local p alive
  [ ${#PIDS[@]} -gt 0 ] || return 0
  kill -TERM "${PIDS[@]}" 2>/dev/null || true
  for _ in $(seq 1 100); do
    alive=false
    for p in "${PIDS[@]}"; do kill -0 "$p" 2>/dev/null && alive=true; done
    $alive || break
    sleep 0.2
  done
  for p in "${PIDS[@]}"; do
    if kill -0 "$p" 2>/dev/null; then
      echo "bench: pid $p did not stop within 20 s of SIGTERM: SIGKILL" >&2
      kill -KILL "$p" 2>/dev/null || true
    fi
  done
  wait "${PIDS[@]}" 2>/dev/null || true
  PIDS=()
}
cleanup() {
  local rc=$?
  trap - INT TERM EXIT
  [ -n "$SAMPLER_PID" ] && kill "$SAMPLER_PID" 2>/dev/null || true
  [ -n "$DRIVER_PID" ] && kill "$DRIVER_PID" 2>/dev/null || true
  stop_pids
  [ -n "$SINK_PID" ] && kill "$SINK_PID" 2>/dev/null || true
  exit "$rc"
}
trap cleanup EXIT
trap 'echo; echo "bench: interrupted, stopping everything" >&2; exit 130' INT TERM

port_in_use() { (: <"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Spans the OTLP sink has received so far (0 without one).
sink_count() {
  [ -n "$SINK_PORT" ] || { echo 0; return; }
  local count
  exec 9<>"/dev/tcp/127.0.0.1/$SINK_PORT" || { echo 0; return; }
  printf 'GET /count HTTP/1.0\r\n\r\n' >&9
  count=$(tail -1 <&9)
  exec 9>&-
  echo "${count:-0}"
}

start() { # name logfile command...
  local name=$1 log=$2; shift 2
  "$@" >"$log" 2>&1 &
  PIDS+=($!)
  echo "bench:   started $name (pid $!), log $log" >&2
}

# Waits until every started process answers; on failure says why and returns 1.
await_hand_written() {
  local timeout=${BENCH_START_TIMEOUT:-300}
  java -jar "$BENCH_JAR" await "$timeout" stock=127.0.0.1:52071 pricing=127.0.0.1:52072 edge=127.0.0.1:52073 >&2
}
await_suite() { # grpc ports: stock pricing edge
  local timeout=${BENCH_START_TIMEOUT:-300} end=$((SECONDS + ${BENCH_START_TIMEOUT:-300}))
  local names=(chain.v1.Stock chain.v1.Pricing chain.v1.Edge) ports=("$@") i p
  for i in 0 1 2; do
    until java -jar "$CLI_JAR" probe "127.0.0.1:${ports[$i]}" --service "${names[$i]}" >/dev/null 2>&1; do
      for p in "${PIDS[@]}"; do
        kill -0 "$p" 2>/dev/null || { echo "bench: pid $p exited before it answered a health check" >&2; return 1; }
      done
      if [ $SECONDS -ge $end ]; then
        echo "bench: ${names[$i]} on 127.0.0.1:${ports[$i]} not SERVING within ${timeout} s" >&2
        return 1
      fi
      sleep 1
    done
    echo "bench: ${names[$i]} on 127.0.0.1:${ports[$i]} SERVING" >&2
  done
  # And one real Checkout through all three hops, every line available.
  java -jar "$BENCH_JAR" await 30 "edge=127.0.0.1:${ports[2]}" >&2
}

# Busy ticks of the whole machine (every process, every core): user nice system irq softirq steal.
machine_ticks() {
  local _cpu u n s idle iow irq sirq steal _rest
  read -r _cpu u n s idle iow irq sirq steal _rest </proc/stat
  echo $((u + n + s + irq + sirq + steal))
}
# Every 0.2 s: "<epoch seconds> <ticks of pid1> <ticks of pid2> ... <machine busy ticks>",
# "-" for a pid that is gone.
sample_cpu() {
  local out=$1 line p; shift
  local f
  while :; do
    line=$EPOCHREALTIME
    for p in "$@"; do
      if read -r -a f 2>/dev/null <"/proc/$p/stat"; then line+=" $((f[13] + f[14]))"; else line+=" -"; fi
    done
    echo "$line $(machine_ticks)" >>"$out"
    sleep 0.2
  done
}

# "<epoch seconds> <switches of pid 1> <of pid 2> …": each process's context switches so far,
# voluntary and not, summed over its threads (/proc/<pid>/task/*/status).
switches_line() {
  local line=$EPOCHREALTIME p
  for p in "$@"; do
    line+=" $(cat /proc/"$p"/task/*/status 2>/dev/null | awk '/ctxt_switches/ {n += $2} END {print n + 0}')"
  done
  echo "$line"
}

# "<contender>-round-<n>" of a contender's run directory ($1 = .../<contender>/round-<n>): the
# prefix of the files BENCH_JFR and BENCH_PROFILE write.
run_label() {
  echo "$(basename "$(dirname "$1")")-$(basename "$1")"
}

# With BENCH_JFR: JFR on each server (stock pricing edge) from the end of the warm-up, for the
# measured period. $1 = the contender's run directory, $2.. = server pids.
record_measured_period() {
  local dir=$1 name i=0; shift
  local names=(stock pricing edge)
  mkdir -p "$BENCH_JFR"
  sleep "$WARMUP"
  for pid in "$@"; do
    name=$(run_label "$dir")-${names[$i]}
    jcmd "$pid" JFR.start name=bench settings="${BENCH_JFR_SETTINGS:-default}" duration="${DURATION}s" \
      filename="$(cd "$BENCH_JFR" && pwd)/$name.jfr" >/dev/null 2>&1 \
      || echo "bench: JFR did not start in $name (pid $pid)" >&2
    i=$((i + 1))
  done
}

# With BENCH_PROFILE: async-profiler in each server for the measured period but its first second and
# its last few (the servers stop right after the driver). $1 = the contender's run directory, $2.. = server pids.
profile_measured_period() {
  local dir=$1 name i pid; shift
  local names=(stock pricing edge) files=() begin=$SECONDS
  sleep $((WARMUP + 1)) # the driver's own start, then its warm-up
  # The three at once: each jcmd is a JVM of its own, up to a second on a loaded machine.
  i=0
  for pid in "$@"; do
    (jcmd "$pid" JVMTI.agent_load "$ASYNC_PROFILER" '"start,event=cpu,interval=2ms"' >/dev/null 2>&1 \
      || echo "bench: async-profiler did not start in ${names[$i]} (pid $pid)" >&2) &
    i=$((i + 1))
  done
  wait
  # Stopped before the driver ends, since the servers are gone right after it, with time for jcmd
  # to start and the profiles to be written.
  local margin=$((DURATION > 6 ? 3 : DURATION / 2))
  local stop_at=$((begin + WARMUP + DURATION - margin))
  [ "$SECONDS" -lt "$stop_at" ] && sleep $((stop_at - SECONDS))
  i=0
  for pid in "$@"; do
    name=$(run_label "$dir")-${names[$i]}
    files+=("$PROFILE_DIR/$name.collapsed")
    (jcmd "$pid" JVMTI.agent_load "$ASYNC_PROFILER" "\"stop,collapsed,file=$PROFILE_DIR/$name.collapsed\"" \
      >/dev/null 2>&1 || echo "bench: async-profiler did not stop in ${names[$i]} (pid $pid)" >&2) &
    i=$((i + 1))
  done
  wait
  python3 "$ROOT/scripts/lib/profile_summary.py" "${files[@]}" \
    >"$PROFILE_DIR/$(run_label "$dir").md" 2>&1 || true
}

# Runs the driver against 127.0.0.1:$1 for WARMUP + DURATION while sampling CPU; writes
# $dir/result.json. $2 = directory, $3.. = server pids (stock pricing edge).
drive() {
  local port=$1 dir=$2; shift 2
  local servers=("$@") c m rc=0
  local spans_before t_begin=$EPOCHREALTIME
  spans_before=$(sink_count)
  if [ "$DRIVER" = grpcops ]; then
    java -jar "$CLI_JAR" load "127.0.0.1:$port" --method chain.v1.Edge/Checkout --data "$DATA" \
      "${LOAD_SHAPE[@]}" ${DEADLINE:+--deadline "$DEADLINE"} --connections "$CONNECTIONS" --duration "${DURATION}s" --warmup "${WARMUP}s" --json \
      >"$dir/driver.out" 2>"$dir/driver.err" &
  else
    c=$(( CONCURRENCY < CONNECTIONS ? CONCURRENCY : CONNECTIONS ))
    m=$(( (CONCURRENCY + c - 1) / c ))
    local warm=()
    [ "$WARMUP" -gt 0 ] && warm=(--warm-up-time "$WARMUP")
    h2load -D "$DURATION" "${warm[@]}" -c "$c" -m "$m" \
      -H 'content-type: application/grpc' -H 'te: trailers' -d "$RUN_DIR/body.bin" \
      --log-file "$dir/requests.log" "http://127.0.0.1:$port/chain.v1.Edge/Checkout" \
      >"$dir/driver.out" 2>"$dir/driver.err" &
  fi
  DRIVER_PID=$!
  [ -n "${BENCH_JFR:-}" ] && record_measured_period "$dir" "${servers[@]}" &
  [ -n "${BENCH_PROFILE:-}" ] && profile_measured_period "$dir" "${servers[@]}" &
  sample_cpu "$dir/cpu.samples" "${servers[@]}" "$DRIVER_PID" &
  SAMPLER_PID=$!
  (sleep "$WARMUP"; switches_line "${servers[@]}" >"$dir/switches.start") &
  local switches_pid=$!
  wait "$DRIVER_PID" || rc=$?
  local t_end=$EPOCHREALTIME
  switches_line "${servers[@]}" >"$dir/switches.end"
  kill "$switches_pid" 2>/dev/null || true
  kill "$SAMPLER_PID" 2>/dev/null || true
  wait "$SAMPLER_PID" 2>/dev/null || true
  SAMPLER_PID=""
  DRIVER_PID=""
  local final=$t_end p f
  for p in "${servers[@]}"; do
    if read -r -a f 2>/dev/null <"/proc/$p/stat"; then final+=" $((f[13] + f[14]))"; else final+=" -"; fi
  done
  echo "$final - $(machine_ticks)" >>"$dir/cpu.samples"
  if [ $rc -ne 0 ]; then
    echo "bench: the load driver failed (exit $rc); see $dir/driver.err" >&2
    tail -5 "$dir/driver.err" >&2 || true
    return 1
  fi
  local spans=$(( $(sink_count) - spans_before ))
  python3 - "$DRIVER" "$dir" "$DURATION" "$(getconf CLK_TCK)" "$t_end" "$spans" "$t_begin" <<'PY'
import json, sys
driver, d, duration, hz, t_end = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
spans, t_begin = int(sys.argv[6]), float(sys.argv[7])

status = {}
if driver == "grpcops":
    out = json.load(open(f"{d}/driver.out"))
    # The measured period as the driver saw it (after the warm-up, up to the end of its last call).
    duration = float(out.get("duration_s") or duration)
    completed = int(out["completed"])
    throughput = float(out["throughput_per_s"])
    p50, p99 = float(out["latency_ms"]["p50"]), float(out["latency_ms"]["p99"])
    status = out.get("status", {})
else:
    lat = []
    http = {}
    for line in open(f"{d}/requests.log"):
        parts = line.split()
        if len(parts) < 3:
            continue
        http[parts[1]] = http.get(parts[1], 0) + 1
        if parts[1] == "200":
            lat.append(int(parts[2]) / 1000.0)
    lat.sort()
    pct = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] if lat else float("nan")
    completed = len(lat)
    throughput = completed / duration
    p50, p99 = pct(0.50), pct(0.99)
    status = {("HTTP " + k): v for k, v in http.items()}
# CPU: the three servers' (and the driver's) ticks over the measured period,
# taken as the `duration` seconds before the driver exited (it exits right after its last call).
rows = []
for line in open(f"{d}/cpu.samples"):
    parts = line.split()
    rows.append((float(parts[0]), [None if x == "-" else int(x) for x in parts[1:]]))
n = len(rows[0][1])
for i in range(n):  # a column that ended (the driver exits first) keeps its last value
    last = None
    for t, v in rows:
        if v[i] is None:
            v[i] = last
        last = v[i]
t_start = t_end - duration
def at(t, i):
    prev = None
    for ts, v in rows:
        if v[i] is None:
            continue
        if ts >= t:
            if prev is None:
                return v[i]
            (pt, pv) = prev
            return pv + (v[i] - pv) * (t - pt) / (ts - pt) if ts > pt else v[i]
        prev = (ts, v[i])
    return prev[1] if prev else 0
cpu = [max(0.0, (at(t_end, i) - at(t_start, i)) / hz) for i in range(n)]

per_k = lambda s: s / completed * 1000 if completed else float("nan")
# Context switches per Checkout: counted from the end of the warm-up to the driver's exit, a
# period a little longer than the measured one, so taken at the measured throughput.
switches = {}
try:
    s0 = [float(x) for x in open(f"{d}/switches.start").read().split()]
    s1 = [float(x) for x in open(f"{d}/switches.end").read().split()]
    checkouts = throughput * (s1[0] - s0[0])
    if checkouts > 0:
        switches = {name: (s1[i + 1] - s0[i + 1]) / checkouts for i, name in enumerate(("stock", "pricing", "edge"))}
except (OSError, ValueError, IndexError):
    pass  # the driver ended before its warm-up did: no count
json.dump({
    "completed": completed, "throughput": throughput, "p50": p50, "p99": p99, "status": status,
    # Answered OK (within the deadline, when there is one) per second of the measured period.
    "ok_per_s": (status.get("OK", status.get("HTTP 200", 0)) / duration) if duration > 0 else 0.0,
    # Spans exported over the whole drive (warm-up and measured period), per Checkout at its rate.
    "spans_per_checkout": spans / (throughput * (t_end - t_begin)) if throughput > 0 else 0.0,
    "cpu_s": sum(cpu[:3]), "cpu_per_1000": per_k(sum(cpu[:3])),
    "switches_per_checkout": sum(switches.values()) if switches else float("nan"),
    "switches_per_checkout_by_process": switches or {"stock": float("nan"), "pricing": float("nan"), "edge": float("nan")},
    "cpu_per_1000_by_process": {"stock": per_k(cpu[0]), "pricing": per_k(cpu[1]), "edge": per_k(cpu[2]),
                                "driver": per_k(cpu[3])},
    "cores_busy": {"stock": cpu[0] / duration, "pricing": cpu[1] / duration, "edge": cpu[2] / duration,
                   "driver": cpu[3] / duration,
                   # everything else on the machine: colleagues, builds, the JVMs' neighbours
                   "others": max(0.0, cpu[4] - sum(cpu[:4])) / duration},
}, open(f"{d}/result.json", "w"))
PY
}

# ----------------------------------------------------------------------------- contenders
SUITE_COMMON=(--grpc.server.address=127.0.0.1 --management.server.address=127.0.0.1
              --grpcops.shutdown.drain-delay=0s)
run_suite() { # dir jars-dir extra-args...  (jars-dir empty: this checkout's target/ directories)
  local dir=$1 jars=$2; shift 2
  local s=52061 p=52062 e=52063
  local stock_jar=${jars:-stock-service/target}/stock-service.jar
  local pricing_jar=${jars:-pricing-service/target}/pricing-service.jar
  local edge_jar=${jars:-edge-service/target}/edge-service.jar
  start stock "$dir/stock.log" java ${BENCH_JAVA_OPTS:-} -jar "$stock_jar" \
    --grpc.server.port=$s --management.server.port=52064 "${SUITE_COMMON[@]}" "$@"
  start pricing "$dir/pricing.log" java ${BENCH_JAVA_OPTS:-} -jar "$pricing_jar" \
    --grpc.server.port=$p --management.server.port=52065 --grpc.client.stock.address=static://127.0.0.1:$s \
    "${SUITE_COMMON[@]}" "$@"
  start edge "$dir/edge.log" java ${BENCH_JAVA_OPTS:-} -jar "$edge_jar" \
    --grpc.server.port=$e --management.server.port=52066 --grpc.client.pricing.address=static://127.0.0.1:$p \
    "${SUITE_COMMON[@]}" "$@"
  await_suite $s $p $e || return 1
  drive $e "$dir" "${PIDS[@]}"
}
run_hand_written() { # dir
  local dir=$1
  start stock "$dir/stock.log" java ${BENCH_JAVA_OPTS:-} -jar "$BENCH_JAR" stock 52071
  start pricing "$dir/pricing.log" java ${BENCH_JAVA_OPTS:-} -jar "$BENCH_JAR" pricing 52072 127.0.0.1:52071
  start edge "$dir/edge.log" java ${BENCH_JAVA_OPTS:-} -jar "$BENCH_JAR" edge 52073 127.0.0.1:52072
  await_hand_written || return 1
  drive 52073 "$dir" "${PIDS[@]}"
}
contender_ports() {
  case "$1" in a) echo 52071 52072 52073 ;; *) echo 52061 52062 52063 52064 52065 52066 ;; esac
}
contender_name() {
  case "$1" in
    a) echo "(a) hand-written grpc-java" ;;
    b) echo "(b) suite" ;;
    c) echo "(c) suite, budget layer off" ;;
    d) echo "(d) suite, admission off" ;;
    e) echo "(e) $(variant_name)" ;;
  esac
}
variant_name() { # empty when (e) is not configured
  [ -z "$VARIANT_JARS" ] && [ ${#VARIANT_ARGS[@]} -eq 0 ] && return 0
  local name="suite"
  [ -n "$VARIANT_JARS" ] && name+=" built in $VARIANT_JARS"
  [ ${#VARIANT_ARGS[@]} -gt 0 ] && name+=" with ${VARIANT_ARGS[*]}"
  echo "$name"
}
run_contender() { # id dir
  local id=$1 dir=$2 port
  mkdir -p "$dir"
  for port in $(contender_ports "$id"); do
    if port_in_use "$port"; then
      echo "bench: port 127.0.0.1:$port is in use; stop whatever listens there" >&2
      return 1
    fi
  done
  case "$id" in
    a) run_hand_written "$dir" ;;
    b) run_suite "$dir" "" ;;
    c) run_suite "$dir" "" --grpcops.budget.enabled=false ;;
    d) run_suite "$dir" "" --grpcops.admission.enabled=false ;;
    e) run_suite "$dir" "$VARIANT_JARS" "${VARIANT_ARGS[@]}" ;;
  esac
}

CONTENDERS=(a b c d e)
[ -n "$ONLY" ] && IFS=, read -r -a CONTENDERS <<<"$ONLY"

LOAD_BEFORE=$(uptime)
JAVA_VERSION=$(java -version 2>&1 | head -1)
CPU_MODEL=$(cpu_model)
STARTED_AT=$(date -u +%Y-%m-%dT%H:%M:%SZ)
echo "bench: $(nproc) CPUs, ${CPU_MODEL}; load average ${LOAD_BEFORE##*load average: }; driver $DRIVER; logs in $RUN_DIR" >&2

if [ -n "$SINK_PORT" ]; then
  port_in_use "$SINK_PORT" && die "--otlp-sink: port 127.0.0.1:$SINK_PORT is in use"
  java -XX:+UseSerialGC -Xmx64m -jar "$BENCH_JAR" otlp-sink "$SINK_PORT" >"$RUN_DIR/otlp-sink.log" 2>&1 &
  SINK_PID=$!
  for _ in $(seq 1 100); do port_in_use "$SINK_PORT" && break; sleep 0.1; done
  port_in_use "$SINK_PORT" || die "the OTLP sink did not start; see $RUN_DIR/otlp-sink.log"
fi

failed=()
for ((round = 1; round <= ROUNDS; round++)); do
  # Every other round runs the contenders in reverse (a b, b a, a b ...): a machine that speeds up
  # or slows down over the run (neighbours, caches, its clock) then favours none of them.
  order=("${CONTENDERS[@]}")
  if ((round % 2 == 0)); then
    order=()
    for ((k = ${#CONTENDERS[@]} - 1; k >= 0; k--)); do order+=("${CONTENDERS[k]}"); done
  fi
  for id in "${order[@]}"; do
    if [ "$id" = e ] && [ ${#VARIANT_ARGS[@]} -eq 0 ] && [ -z "$VARIANT_JARS" ]; then
      continue
    fi
    [[ " ${failed[*]} " == *" $id "* ]] && continue # failed once: not again
    dir="$RUN_DIR/$id/round-$round"
    echo "bench: $(contender_name "$id"), round $round of $ROUNDS: warm-up ${WARMUP} s, then ${DURATION} s at $SHAPE_TEXT" >&2
    if ! run_contender "$id" "$dir"; then
      failed+=("$id")
      # Spring Boot's failure analysis says best why a service did not start.
      for f in "$dir"/{stock,pricing,edge}.log; do
        [ -f "$f" ] || continue
        reason=$(sed -n '/^Description:/,/^Action:/p' "$f" | sed '1d;$d' | tr -s ' \n' ' ' | sed 's/^ //; s/ $//')
        [ -n "$reason" ] && echo "$(basename "$f" .log) did not start: $reason" >>"$RUN_DIR/$id/failure.txt"
      done
      echo "bench: $(contender_name "$id") FAILED; logs in $dir" >&2
      for f in "$dir"/{stock,pricing,edge}.log; do
        [ -f "$f" ] && { echo "--- tail of $f" >&2; tail -15 "$f" >&2; }
      done
    fi
    stop_pids
  done
done
LOAD_AFTER=$(uptime)

# ----------------------------------------------------------------------------- report
REPORT=$(python3 - "$RUN_DIR" "$DRIVER" "${CONTENDERS[*]}" "$(variant_name)" "$DEADLINE" <<'PY'
import json, os, sys
run_dir, driver, ids, variant, deadline = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4], sys.argv[5]
names = {"a": "(a) hand-written grpc-java", "b": "(b) suite", "c": "(c) suite, budget layer off",
         "d": "(d) suite, admission off", "e": f"(e) {variant}"}
import glob, statistics
def median_of(results):
    """Each number the median over the rounds (the only round, when there was one)."""
    if len(results) == 1:
        return results[0]
    first = results[0]
    out = {}
    for k, v in first.items():
        if isinstance(v, dict) and all(isinstance(x, (int, float)) for x in v.values()):
            out[k] = {kk: statistics.median(r[k][kk] for r in results) for kk in v}
        elif isinstance(v, (int, float)):
            out[k] = statistics.median(r[k] for r in results)
        else:
            out[k] = v
    # Calls that were not OK: summed over every round.
    out["status"] = {}
    for r in results:
        for code, n in r["status"].items():
            out["status"][code] = out["status"].get(code, 0) + n
    return out
res = {}
each = {}
round_no = lambda p: int(p.split("round-")[-1].split(os.sep)[0])
for i in ids:
    paths = sorted(glob.glob(os.path.join(run_dir, i, "round-*", "result.json")), key=round_no)
    rounds = [json.load(open(p)) for p in paths]
    if rounds:
        res[i] = median_of(rounds)
        each[i] = rounds
# With a deadline the Checkouts answered OK in time are the figure: a column of their own, and the
# ratio is of them, not of every answer.
ok_col = bool(deadline)
figure = "ok_per_s" if ok_col else "throughput"
base = res.get("a", {}).get(figure)
several = any(len(r) > 1 for r in each.values())
out = []
out.append("| contender | Checkouts/s |" + (" OK/s |" if ok_col else "") + " p50 ms | p99 ms | CPU s / 1000 Checkouts | switches / Checkout | ratio to (a) |"
           + (" each round, Checkouts/s |" if several else ""))
out.append("|---|---:|" + ("---:|" if ok_col else "") + "---:|---:|---:|---:|---:|" + ("---:|" if several else ""))
for i in ["a", "b", "c", "d", "e"]:
    if i not in ids or (i == "e" and not variant):
        continue
    r = res.get(i)
    if r is None:
        why = os.path.join(run_dir, i, "failure.txt")
        why = open(why).read().strip().replace("\n", "; ").replace("|", "/") if os.path.exists(why) else "see the logs"
        out.append(f"| {names[i]} | FAILED: {why} | | | | | |" + (" |" if ok_col else "") + (" |" if several else ""))
        continue
    ratio = f"{r[figure] / base:.2f}" if base else "—"
    rounds = " " + " ".join(f"{x['throughput']:.0f}" for x in each[i]) + " |" if several else ""
    ok = f" {r.get('ok_per_s', float('nan')):.0f} |" if ok_col else ""
    out.append(f"| {names[i]} | {r['throughput']:.0f} |{ok} {r['p50']:.1f} | {r['p99']:.1f} | {r['cpu_per_1000']:.2f} | {r.get('switches_per_checkout', float('nan')):.2f} | {ratio} |" + rounds)
out.append("")
out.append("Where the CPU went: CPU s / 1000 Checkouts (cores kept busy) during the measured period; the last column is")
out.append("every other process on the machine, in cores: well above 0, neighbours competed with the run.")
out.append("")
out.append("| contender | Stock | Pricing | Edge | load driver | others |")
out.append("|---|---:|---:|---:|---:|---:|")
for i in ["a", "b", "c", "d", "e"]:
    r = res.get(i)
    if r is None:
        continue
    k, c = r["cpu_per_1000_by_process"], r["cores_busy"]
    cell = lambda n: f"{k[n]:.2f} ({c[n]:.2f})"
    out.append(f"| {names[i]} | {cell('stock')} | {cell('pricing')} | {cell('edge')} | {cell('driver')} | {c.get('others', 0):.2f} |")
notes = []
for i in ["a", "b", "c", "d", "e"]:
    r = res.get(i)
    if r is None:
        continue
    bad = {k: v for k, v in r["status"].items() if k not in ("OK", "HTTP 200")}
    if bad:
        notes.append(f"- {names[i]}: calls not OK: {json.dumps(bad)}")
    if r.get("spans_per_checkout", 0) > 0:
        notes.append(f"- {names[i]}: the OTLP sink received about {r['spans_per_checkout']:.2f} spans per Checkout")
if notes:
    out.append("")
    out.extend(notes)
print("\n".join(out))
PY
)

H2_C=$(( CONCURRENCY < CONNECTIONS ? CONCURRENCY : CONNECTIONS ))
if [ "$DRIVER" = h2load ]; then
  DRIVER_LINE="h2load ($(h2load --version | head -1)), $H2_C connections × $(( (CONCURRENCY + H2_C - 1) / H2_C )) streams. **h2load reads HTTP status only, not grpc-status: a Checkout that ended with a gRPC error still counts as completed.** \`grpcops load\` replaces it once the CLI has it."
else
  if [ -n "$RATE" ]; then
    DRIVER_LINE="\`grpcops load\` (cli/target/grpcops-cli.jar), open loop: $RATE Checkouts started per second over $CONNECTIONS connections"
  else
    DRIVER_LINE="\`grpcops load\` (cli/target/grpcops-cli.jar), closed loop: $CONCURRENCY calls always outstanding over $CONNECTIONS connections"
  fi
fi
{
  echo "## grpcops bench, $STARTED_AT"
  echo
  echo "- command: \`$COMMAND\`"
  echo "- machine: $(nproc) CPUs (nproc), ${CPU_MODEL}; $(awk '/MemTotal/ {printf "%.0f GiB RAM", $2/1048576}' /proc/meminfo)"
  echo "- load average before the run: ${LOAD_BEFORE##*load average: } (1, 5, 15 min); after: ${LOAD_AFTER##*load average: }"
  echo "- java: $JAVA_VERSION${BENCH_JAVA_OPTS:+, options: $BENCH_JAVA_OPTS}"
  echo "- load: chain.v1.Edge/Checkout \`$DATA\` (delay_ms 0, $( [ -n "$DEADLINE" ] && echo "deadline $DEADLINE" || echo "no deadline: every hop uses the 2 s default budget")), warm-up ${WARMUP} s, measured ${DURATION} s, one contender after another$( [ "$ROUNDS" -gt 1 ] && echo "; $ROUNDS rounds interleaved, every other one in reverse order, each number the median over the rounds")"
  echo "- driver: $DRIVER_LINE"
  echo "- CPU: utime+stime of the three server processes (/proc/<pid>/stat, sampled every 0.2 s) over the measured period, per 1000 completed Checkouts"
  echo "- switches: the three server processes' context switches (voluntary and not, every thread: /proc/<pid>/task/*/status) per Checkout, from the end of the warm-up to the end of the run; each time a thread hands a call to another that sleeps, both switch"
  echo
  echo "$REPORT"
} >"$RUN_DIR/report.md"
cat "$RUN_DIR/report.md"
if [ -n "$OUT" ]; then
  cp "$RUN_DIR/report.md" "$OUT"
  echo "bench: report written to $OUT" >&2
fi
if [ ${#failed[@]} -gt 0 ]; then
  echo "bench: failed: ${failed[*]} (logs in $RUN_DIR)" >&2
  exit 1
fi
if [ "${BENCH_KEEP_LOGS:-0}" = 1 ]; then
  echo "bench: logs kept in $RUN_DIR" >&2
else
  rm -rf "$RUN_DIR"
fi
