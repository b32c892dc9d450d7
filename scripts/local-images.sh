#!/usr/bin/env bash
# For machines that reach Debian's archive but no image registry: starts a Docker engine if none
# answers, and builds the base images the project's Dockerfiles and compose file can use instead
# of public ones, with debootstrap + docker import:
#   grpcops-local/jre:17        Debian bookworm + openjdk-17-jre-headless  (BASE_IMAGE)
#   grpcops-local/prometheus    Debian bookworm + prometheus               (PROMETHEUS_IMAGE)
# An image that already exists is kept (cached by tag). Prints the two variables to export.
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

build_base() {
  local tag=$1 packages=$2
  if docker image inspect "$tag" >/dev/null 2>&1; then
    log "$tag: cached"
    return 0
  fi
  local rootfs
  rootfs=$(mktemp -d /tmp/grpcops-rootfs.XXXXXX)
  log "$tag: debootstrap bookworm + $packages"
  debootstrap --variant=minbase --include="$packages" bookworm "$rootfs" "$(debian_mirror)" >/dev/null
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -c . | docker import -c 'ENV LANG=C.UTF-8' - "$tag" >/dev/null
  rm -rf "$rootfs"
  log "$tag: built"
}

ensure_engine
build_base grpcops-local/jre:17 openjdk-17-jre-headless
build_base grpcops-local/prometheus prometheus
echo "export BASE_IMAGE=grpcops-local/jre:17 PROMETHEUS_IMAGE=grpcops-local/prometheus"
