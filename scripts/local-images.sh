#!/usr/bin/env bash
# For machines that reach Debian's archive but no image registry: starts a Docker engine if none
# answers, and builds the base images the project's Dockerfiles and compose file can use instead
# of public ones, with debootstrap + docker import:
#   grpcops-local/jre:25        Debian bookworm + a Java 25 runtime made (jlink) from this machine's
#                               JDK 25 (JDK25_HOME, else /usr/lib/jvm/*25*)  (BASE_IMAGE, when there is one)
#   grpcops-local/jre:17        Debian bookworm + openjdk-17-jre-headless  (BASE_IMAGE otherwise)
#   grpcops-local/prometheus    Debian bookworm + prometheus               (PROMETHEUS_IMAGE)
# The services' images start faster on Java 25 (an AOT cache, docs/runtime.md); the build and the
# tests stay on Java 17. An image that already exists is kept (cached by tag). Prints the two
# variables to export.
# With a normal Docker setup you need none of this: the defaults are public images.
set -euo pipefail

log() { echo "local-images: $*" >&2; }

ensure_engine() {
  docker info >/dev/null 2>&1 && return 0
  command -v dockerd >/dev/null 2>&1 || { log "no Docker engine and no dockerd (scripts/install-deps.sh installs docker.io)"; exit 1; }
  log "starting dockerd (log: /var/log/grpcops-dockerd.log)"
  nohup dockerd >/var/log/grpcops-dockerd.log 2>&1 &
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && return 0
    sleep 1
  done
  log "dockerd did not come up; see /var/log/grpcops-dockerd.log"
  exit 1
}

# The Debian mirror this machine's apt already uses (deb822 sources or a classic sources.list).
debian_mirror() {
  local uri
  uri=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' \
          /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
  if [ -z "$uri" ]; then
    uri=$(awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; exit } }' \
            /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true)
  fi
  [ -n "$uri" ] || { log "no Debian mirror found in apt's sources"; exit 1; }
  echo "$uri"
}

# build_base TAG PACKAGES [JDK]: Debian bookworm with PACKAGES; with JDK, also a runtime of all its
# modules in /opt/java (jlink, without debug symbols, man pages and headers; without jlink itself,
# which a JDK linked from its own run-time image, as Temurin's 25 is, cannot copy, and without
# incubator modules, which warn at every start), java on the PATH.
build_base() {
  local tag=$1 packages=$2 jdk=${3:-}
  if docker image inspect "$tag" >/dev/null 2>&1; then
    log "$tag: cached"
    return 0
  fi
  local rootfs changes=(-c 'ENV LANG=C.UTF-8')
  rootfs=$(mktemp -d /tmp/grpcops-rootfs.XXXXXX)
  log "$tag: debootstrap bookworm${packages:+ + $packages}${jdk:+ + a runtime from $jdk}"
  debootstrap --variant=minbase ${packages:+--include="$packages"} bookworm "$rootfs" "$(debian_mirror)" >/dev/null
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  if [ -n "$jdk" ]; then
    "$jdk/bin/jlink" --output "$rootfs/opt/java" --strip-debug --no-man-pages --no-header-files \
      --add-modules "$("$jdk/bin/java" --list-modules | sed 's/@.*//' | grep -vxE 'jdk.jlink|jdk.jpackage|jdk.incubator.*' | paste -sd, -)"
    changes+=(-c 'ENV JAVA_HOME=/opt/java' -c 'ENV PATH=/opt/java/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin')
  fi
  tar -C "$rootfs" -c . | docker import "${changes[@]}" - "$tag" >/dev/null
  rm -rf "$rootfs"
  log "$tag: built"
}

# A JDK 25 on this machine: JDK25_HOME, else the first /usr/lib/jvm/*25* with jlink; nothing if none.
jdk25() {
  local dir
  for dir in ${JDK25_HOME:-} /usr/lib/jvm/*25*; do
    [ -x "$dir/bin/jlink" ] || continue
    "$dir/bin/java" -XshowSettings:properties -version 2>&1 | grep -q 'java.specification.version = 25$' || continue
    echo "$dir"
    return 0
  done
  return 0
}

ensure_engine
base=grpcops-local/jre:17
jdk=$(jdk25)
if [ -n "$jdk" ]; then
  build_base grpcops-local/jre:25 "" "$jdk"
  base=grpcops-local/jre:25
else
  log "no JDK 25 on this machine (JDK25_HOME): the images run on Java 17"
  build_base grpcops-local/jre:17 openjdk-17-jre-headless
fi
build_base grpcops-local/prometheus prometheus
echo "export BASE_IMAGE=$base PROMETHEUS_IMAGE=grpcops-local/prometheus"
