#!/usr/bin/env bash
# The suite in one command: the Edge -> Pricing -> Stock chain, three WhoAmI replicas and
# Prometheus from docker-compose.yml, started detached and waited for until every service is
# healthy. On the way, and only where needed, it
#   - installs Docker and Compose (scripts/install-deps.sh, Debian/Ubuntu; elsewhere it says what to install),
#   - starts a Docker engine if none answers,
#   - builds the jars (mvn package) if one is missing, or always with --build,
#   - builds local base images (scripts/local-images.sh) if no image registry answers,
#   - uses `docker compose` (plugin) or `docker-compose` (1.29), whichever works.
# Safe to run again: what is there is kept, running containers stay up if nothing changed.
# Bash 3.2 compatible (macOS), no GNU-only tools.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  cat <<'TXT'
usage: scripts/up.sh [--build] [--timeout SECONDS] [--no-warm]
       scripts/up.sh --down

Starts the grpcops suite with Docker Compose and waits until every service is healthy:
gRPC Edge 127.0.0.1:50063, Pricing :50062, Stock :50061, WhoAmI (whoami-1) :50051,
Prometheus http://127.0.0.1:9090.

  --build            rebuild the jars (mvn package) even if they exist
  --timeout SECONDS  how long to wait for the suite to become healthy (default 300; env UP_TIMEOUT)
  --no-warm          skip the warm-through: once healthy, the suite is sent the suggested load
                     (300 Checkouts/s) in 10 s rounds until a round fails no call (at most 6), so
                     that its JIT compilers are done before your first load run (env UP_WARM=0)
  --down             stop and remove the suite's containers and network (docker compose down)
  -h, --help         this text

Env: BASE_IMAGE, PROMETHEUS_IMAGE (base images; if set, no registry check is made).
Logs: logs/up.log (image builds and compose output), logs/mvn.log (jar build).
TXT
}

log() { echo "up.sh: $*" >&2; }
die() { echo "up.sh: $*" >&2; exit 1; }
have() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ]; }
now() { date +%s; }

build_jars=false
down=false
warm="${UP_WARM:-1}"
timeout="${UP_TIMEOUT:-300}"
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build_jars=true ;;
    --down) down=true ;;
    --no-warm) warm=0 ;;
    --timeout)
      [ $# -ge 2 ] || die "--timeout needs a number of seconds"
      timeout=$2
      shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument: $1" ;;
  esac
  shift
done
case "$timeout" in ''|*[!0-9]*) die "--timeout: not a number of seconds: $timeout" ;; esac

started=$(now)
mkdir -p logs

DEFAULT_BASE_IMAGE=eclipse-temurin:25-jre        # the defaults of docker-compose.yml
DEFAULT_PROMETHEUS_IMAGE=prom/prometheus:v2.53.0
PORTS="50051 50061 50062 50063 9090"

# ---------------------------------------------------------------- tools: docker, compose, engine

compose=()
pick_compose() {
  if docker compose version >/dev/null 2>&1; then
    compose=(docker compose)
  elif have docker-compose && docker-compose version >/dev/null 2>&1; then
    compose=(docker-compose)
  else
    return 1
  fi
}

# What to install where apt-get is not there (macOS, Fedora, Arch, ...).
manual_install_hint() {
  case "$(uname -s)" in
    Darwin) echo "install Docker Desktop (it brings the engine and 'docker compose'), start it," \
                 "and run scripts/up.sh again" ;;
    *) echo "install a Docker engine and the Compose plugin from your distribution (e.g. packages docker and" \
            "docker-compose-plugin, or docker-compose 1.29+), start the engine, and run scripts/up.sh again" ;;
  esac
}

install_deps() {
  if ! have apt-get; then
    die "missing: $1; no apt-get here, so: $(manual_install_hint)"
  fi
  log "missing: $1; installing with scripts/install-deps.sh"
  scripts/install-deps.sh >&2 || die "scripts/install-deps.sh failed (see above)"
}

ensure_engine() {
  local err
  docker info >/dev/null 2>&1 && return 0
  err=$(docker info 2>&1 >/dev/null | grep -v '^$' | tail -n 1 || true)
  case "$err" in
    *"permission denied"*)
      die "docker cannot reach the engine: $err; run as root, or add yourself to the docker group" \
          "(sudo usermod -aG docker \$USER, then log in again)" ;;
  esac
  if [ "$(uname -s)" = Darwin ]; then
    die "no Docker engine answers ($err): start Docker Desktop and run scripts/up.sh again"
  fi
  if [ -d /run/systemd/system ] && have systemctl; then
    log "no Docker engine answers; systemctl start docker"
    if [ "$(id -u)" -eq 0 ]; then systemctl start docker; else sudo systemctl start docker; fi
  elif [ "$(id -u)" -eq 0 ] && have dockerd; then
    log "no Docker engine answers; starting dockerd (log: /var/log/grpcops-dockerd.log)"
    nohup "$(command -v dockerd || echo /usr/sbin/dockerd)" >/var/log/grpcops-dockerd.log 2>&1 &
  else
    die "no Docker engine answers ($err): start it (as root: dockerd, or systemctl start docker) and run scripts/up.sh again"
  fi
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && return 0
    sleep 1
  done
  die "the Docker engine did not come up within 60 s (see /var/log/grpcops-dockerd.log or journalctl -u docker)"
}

if $down; then
  if ! have docker || ! pick_compose; then
    die "neither 'docker compose' nor 'docker-compose' works here: nothing to stop"
  fi
  docker info >/dev/null 2>&1 || die "no Docker engine answers: nothing to stop"
  log "${compose[*]} down"
  "${compose[@]}" down >&2
  log "suite stopped and removed"
  exit 0
fi

need=""
have docker || need="$need docker"
if have docker && ! pick_compose; then need="$need docker-compose"; fi
if have docker && ! docker info >/dev/null 2>&1 && ! have dockerd && [ "$(uname -s)" != Darwin ]; then
  need="$need dockerd"
fi
[ -z "$need" ] || install_deps "${need# }"
have docker || die "still no docker command; $(manual_install_hint)"
pick_compose || die "neither 'docker compose' nor 'docker-compose' works; $(manual_install_hint)"
ensure_engine
compose_cmd="${compose[*]}"

# ---------------------------------------------------------------- ports

# The published ports must be free, unless it is this suite that holds them (a second run).
# Checked now, and again just before the containers start.
port_holder() {
  docker ps --filter "publish=$1" --format '{{.Names}}' 2>/dev/null | sed -n 1p
}
check_ports() {
  local port holder
  [ -z "$("${compose[@]}" ps -q 2>/dev/null || true)" ] || return 0
  for port in $PORTS; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      holder=$(port_holder "$port")
      die "127.0.0.1:$port is already taken${holder:+ by container $holder (another grpcops suite? docker ps)};" \
          "free it and run again"
    fi
  done
}
check_ports

# ---------------------------------------------------------------- jars

# The jars the images are built from (deploy/Dockerfile: a service's and the CLI's; cli/Dockerfile).
JAR_MODULES="stock-service pricing-service edge-service whoami-service cli"
missing_jar() {
  local module jar
  for module in $JAR_MODULES; do
    jar="$module/target/$module.jar"
    [ "$module" = cli ] && jar=cli/target/grpcops-cli.jar
    if [ ! -f "$jar" ]; then echo "$jar"; return 0; fi
  done
  return 1
}

if ! $build_jars; then
  if jar=$(missing_jar); then
    log "$jar is missing: building the jars"
    build_jars=true
  else
    log "jars: present (scripts/up.sh --build rebuilds them)"
  fi
fi
if $build_jars; then
  if ! have mvn || ! have java; then
    die "building the jars needs Java 17+ and Maven 3.8+" \
        "(Debian/Ubuntu: apt-get install openjdk-17-jdk-headless maven; macOS: brew install openjdk@17 maven)"
  fi
  t=$(now)
  # Only the modules the images are built from and what they need; tests are not compiled: a test
  # that does not compile elsewhere must not stop the suite.
  modules=${JAR_MODULES// /,}
  log "mvn -B -q -ntp package -Dmaven.test.skip=true -pl $modules -am (log: logs/mvn.log)"
  if ! mvn -B -q -ntp package -Dmaven.test.skip=true -pl "$modules" -am >logs/mvn.log 2>&1; then
    tail -n 30 logs/mvn.log >&2
    die "the jar build failed; full output in logs/mvn.log"
  fi
  log "jars built in $(( $(now) - t )) s"
fi

# ---------------------------------------------------------------- base images

# True if the image is here or a registry starts serving it. A registry that does not answer at
# all fails within seconds or says nothing: after 20 s without "Pulling from" the pull is given up.
# A pull that has started (a slow line) is waited for.
image_available() {
  local image=$1 out pid waited=0 rc
  docker image inspect "$image" >/dev/null 2>&1 && return 0
  out=$(mktemp "${TMPDIR:-/tmp}/grpcops-pull.XXXXXX")
  docker pull "$image" >"$out" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$waited" -ge 20 ] && ! grep -q "Pulling from" "$out"; then
      kill "$pid" 2>/dev/null || true
      echo "no answer within 20 s" >>"$out"
      break
    fi
    sleep 1
    waited=$((waited + 1))
  done
  rc=0
  wait "$pid" 2>/dev/null || rc=$?
  [ "$rc" -eq 0 ] || log "docker pull $image: $(grep -v '^$' "$out" | tail -n 1)"
  rm -f "$out"
  return "$rc"
}

local_images=false
if [ -n "${BASE_IMAGE:-}" ] || [ -n "${PROMETHEUS_IMAGE:-}" ]; then
  log "base images from the environment: BASE_IMAGE=${BASE_IMAGE:-$DEFAULT_BASE_IMAGE}" \
      "PROMETHEUS_IMAGE=${PROMETHEUS_IMAGE:-$DEFAULT_PROMETHEUS_IMAGE}"
elif image_available "$DEFAULT_BASE_IMAGE" && image_available "$DEFAULT_PROMETHEUS_IMAGE"; then
  log "base images: $DEFAULT_BASE_IMAGE, $DEFAULT_PROMETHEUS_IMAGE"
else
  log "no image registry answers: building local base images (scripts/local-images.sh)"
  if ! have debootstrap; then
    have apt-get || die "no image registry answers and there is no debootstrap/apt-get to build local base" \
      "images; bring $DEFAULT_BASE_IMAGE and $DEFAULT_PROMETHEUS_IMAGE from a machine that reaches a registry" \
      "(docker save/load), or export BASE_IMAGE (any Java 17+ JRE image; 25 starts faster) and PROMETHEUS_IMAGE (an image" \
      "with 'prometheus' on its PATH) and run again"
    install_deps debootstrap
  fi
  [ "$(id -u)" -eq 0 ] || die "scripts/local-images.sh needs root (debootstrap): run sudo scripts/local-images.sh," \
    "export what it prints, and run scripts/up.sh again"
  t=$(now)
  exports=$(scripts/local-images.sh) || die "scripts/local-images.sh failed (see above)"
  eval "$exports"
  export BASE_IMAGE PROMETHEUS_IMAGE
  local_images=true
  log "base images: $BASE_IMAGE, $PROMETHEUS_IMAGE ($(( $(now) - t )) s)"
fi

# ---------------------------------------------------------------- up

# Images first (no time limit: a first build takes minutes), including the operator CLI's
# (profile "client", never started), so that `compose run --rm client ...` needs no registry either.
t=$(now)
log "$compose_cmd build (log: logs/up.log)"
if ! "${compose[@]}" --profile client build >logs/up.log 2>&1; then
  tail -n 30 logs/up.log >&2
  die "'$compose_cmd build' failed; full output in logs/up.log"
fi
log "images built in $(( $(now) - t )) s"

http_ok() {
  if have curl; then
    curl -fsS -m 2 -o /dev/null "$1" 2>/dev/null
  else
    local rest=${1#http://} hostport path line
    hostport=${rest%%/*}; path=/${rest#*/}
    (
      exec 3<>"/dev/tcp/${hostport%:*}/${hostport#*:}" || exit 1
      printf 'GET %s HTTP/1.0\r\nHost: %s\r\n\r\n' "$path" "$hostport" >&3
      read -r line <&3
      case "$line" in *" 200 "*) exit 0 ;; *) exit 1 ;; esac
    ) 2>/dev/null
  fi
}

# One line per container: service state health restarts.
states() {
  local ids
  ids=$("${compose[@]}" ps -q 2>/dev/null || true)
  [ -n "$ids" ] || return 0
  # shellcheck disable=SC2086
  docker inspect -f '{{index .Config.Labels "com.docker.compose.service"}} {{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}{{else}}none{{end}} {{.RestartCount}}' $ids 2>/dev/null || true
}

check_ports

# A container that exits (once `up` is done) or restarts fails at once; "unhealthy" is waited out
# like "starting": on a loaded machine a healthcheck (a small JVM) can time out thrice, then pass.
# `up -d` itself waits for the depends_on healthchecks (stock, then pricing), so it runs in the
# background and the same deadline covers it and the health of everything it started.
t=$(now)
deadline=$(( t + timeout ))
log "$compose_cmd up -d (at most $timeout s until every service is healthy)"
"${compose[@]}" up -d >>logs/up.log 2>&1 &
up_pid=$!
up_done=false
fail() {
  $up_done || { kill "$up_pid" 2>/dev/null || true; wait "$up_pid" 2>/dev/null || true; }
  "${compose[@]}" ps >&2 || true
  die "$*; scripts/up.sh --down removes the containers"
}
last=""
while :; do
  if ! $up_done && ! kill -0 "$up_pid" 2>/dev/null; then
    up_done=true
    if ! wait "$up_pid"; then
      port=$(sed -n 's/.*Bind for [0-9.]*:\([0-9][0-9]*\) failed.*/\1/p' logs/up.log | sed -n 1p)
      if [ -n "$port" ]; then
        holder=$(port_holder "$port")
        fail "127.0.0.1:$port was taken while the suite started${holder:+, by container $holder" \
             "(another grpcops suite? docker ps)}; free it and run again"
      fi
      tail -n 20 logs/up.log >&2
      fail "'$compose_cmd up -d' failed; full output in logs/up.log; per service: $compose_cmd logs SERVICE"
    fi
  fi
  waiting=""
  waiting_services=""
  failed=""
  failed_services=""
  count=0
  while read -r service state health restarts; do
    [ -n "$service" ] || continue
    count=$((count + 1))
    case "$state/$health" in
      running/healthy) ;;
      running/none)
        if [ "$service" = prometheus ] && ! http_ok http://127.0.0.1:9090/-/ready; then
          waiting="$waiting $service(not ready)"
          waiting_services="$waiting_services $service"
        fi ;;
      exited/*|dead/*)
        if $up_done; then
          failed="$failed $service($state)"
          failed_services="$failed_services $service"
        else  # stopped before and not started again yet: `up` starts in dependency order
          waiting="$waiting $service($state)"
          waiting_services="$waiting_services $service"
        fi ;;
      *)
        waiting="$waiting $service($state/$health)"
        waiting_services="$waiting_services $service" ;;
    esac
    if [ "$restarts" != 0 ]; then
      failed="$failed $service(restarted $restarts times)"
      failed_services="$failed_services $service"
    fi
  done <<EOF
$(states)
EOF
  [ -z "$failed" ] || fail "not healthy:$failed; see: $compose_cmd logs$failed_services"
  if $up_done; then
    [ "$count" -gt 0 ] || fail "'$compose_cmd up -d' started no containers; see logs/up.log"
    [ -n "$waiting" ] || break
  fi
  if [ "$(now)" -ge "$deadline" ]; then
    fail "not healthy after $timeout s:${waiting:- (containers still being created)};" \
         "see: $compose_cmd logs${waiting_services:- SERVICE}; a slow machine may need scripts/up.sh --timeout 600"
  fi
  # Between two steps of `up` (all started so far healthy, the next not created yet) there is
  # nothing new to say.
  if [ -n "$waiting" ] && [ "$waiting" != "$last" ]; then
    log "waiting for:$waiting"
    last=$waiting
  fi
  sleep 3
done
log "all $count containers healthy, Prometheus ready, in $(( $(now) - t )) s"

# ---------------------------------------------------------------- warm-through

# Healthy means each service warmed itself (grpcops.warmup), but on a small machine ten JVMs are
# still compiling the paths that a steady load takes: the suggested load, run right away, would fail
# calls for its first tens of seconds. The same load is sent here until a 10 s round fails none.
# The load printed under "Try:" below, and sent here: one definition for both.
SUGGESTED_DATA='{"skus":["a","b","c"]}'
SUGGESTED_RATE=300
SUGGESTED_LOAD=(load 127.0.0.1:50063 --method Checkout --data "$SUGGESTED_DATA" --rate "$SUGGESTED_RATE" --deadline 1s)
warm_through() {
  local round result status failed start
  if ! have java || [ ! -f cli/target/grpcops-cli.jar ]; then
    log "no java or cli/target/grpcops-cli.jar here: no warm-through (the first load run may fail calls while the JVMs compile)"
    return 0
  fi
  start=$(now)
  for round in 1 2 3 4 5 6; do
    if ! result=$(java -jar cli/target/grpcops-cli.jar "${SUGGESTED_LOAD[@]}" --duration 10s --json 2>>logs/up.log); then
      log "warm-through: the load tool failed (see logs/up.log); going on"
      return 0
    fi
    status=$(printf '%s\n' "$result" | sed -n 's/.*"status":{\([^}]*\)}.*/\1/p')
    # Every status but OK counts; awk, not grep -v, so that a round of only OK is no failed pipeline.
    failed=$(printf '%s\n' "$status" | tr ',' '\n' \
      | awk -F: '$1 != "\"OK\"" && $2 ~ /^[0-9]+$/ { n += $2 } END { print n + 0 }')
    log "warm-through round $round: $SUGGESTED_RATE Checkouts/s for 10 s, $failed failed${status:+ ($status)}"
    if [ "$failed" -eq 0 ]; then
      log "warm: the suggested load fails no call (warm-through took $(( $(now) - start )) s)"
      return 0
    fi
  done
  log "still failing calls after 6 rounds: this machine may be too small for $SUGGESTED_RATE Checkouts/s; try a lower --rate"
}
if [ "$warm" != 0 ]; then
  log "warm-through: the suggested load in 10 s rounds until one fails no call (skip: --no-warm)"
  warm_through
fi

# ---------------------------------------------------------------- where to call

first=$("${compose[@]}" ps -q 2>/dev/null | sed -n 1p)
project=$(docker inspect -f '{{index .Config.Labels "com.docker.compose.project"}}' "$first" 2>/dev/null || basename "$(pwd)")
cat <<TXT
grpcops is up ($compose_cmd project "$project", $(( $(now) - started )) s):
  Edge        127.0.0.1:50063   gRPC chain.v1.Edge/Checkout
  Pricing     127.0.0.1:50062   gRPC chain.v1.Pricing/Quote (pricing-1 of two)
  Stock       127.0.0.1:50061   gRPC chain.v1.Stock/Stats (stock-1; three replicas as dns:///stock:50061 inside the network)
  WhoAmI      127.0.0.1:50051   gRPC grpcops.v1.WhoAmI (whoami-1; all three as dns:///whoami:50051 inside the network)
  Prometheus  http://127.0.0.1:9090   (scrape targets: http://127.0.0.1:9090/targets)
Try:
  java -jar cli/target/grpcops-cli.jar call 127.0.0.1:50063 Checkout '{"skus":["a","b","c"]}' --deadline 1s
  java -jar cli/target/grpcops-cli.jar load 127.0.0.1:50063 --method Checkout --data '$SUGGESTED_DATA' --rate $SUGGESTED_RATE --duration 15s --deadline 1s
  GRPCOPS_ADMIN_TOKEN=... java -jar cli/target/grpcops-cli.jar fault 127.0.0.1:50061 --stall 200ms/1s   (stock-1; --clear to undo)
  $compose_cmd run --rm client spread dns:///whoami:50051 --config rr
Stop:
  scripts/up.sh --down      (or: $compose_cmd down)
TXT
if $local_images; then
  echo "No image registry here: before your own '$compose_cmd build/up', run: export BASE_IMAGE=$BASE_IMAGE PROMETHEUS_IMAGE=$PROMETHEUS_IMAGE"
fi
