#!/usr/bin/env bash
# Installs what the test suite needs beyond Java 17 and Maven, from Debian's archive, when missing:
#   haproxy           - the connection-level (L4) balancer that plays a Kubernetes ClusterIP in the tests
#   docker.io         - a Docker engine, for the container tests and docker compose
#   docker-compose    - Compose for machines without the compose plugin
#   debootstrap       - builds the local base images (scripts/local-images.sh) where no registry is reachable
#   kubernetes-client - kubectl, renders the k8s/ overlays in the k8s tests (`kubectl kustomize`); only
#                       if the release's kubectl is 1.22 or newer: older ones cannot read the overlays
#                       (bookworm has 1.20), and a kubectl that fails is worse than none (test skipped)
#   nghttp2-client    - h2load, an HTTP/2 (gRPC) load generator
#   prometheus        - for promtool (promtool check config deploy/prometheus.yml); the package's own
#                       Prometheus daemon is stopped and disabled again, it would hold port 9090
#   stress            - CPU and memory load, for test runs on a loaded machine
#   iproute2, iptables - network namespaces with veth pairs and packet drops, for the silent-node
#                       system test (a replica whose node goes silent: SilentNodeIT)
# Safe to run again: it installs only what is not there. Needs root (or sudo) on Debian/Ubuntu.
set -euo pipefail

missing=()
have() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ]; }
have haproxy || missing+=(haproxy)
have dockerd || missing+=(docker.io)
have docker-compose || docker compose version >/dev/null 2>&1 || missing+=(docker-compose)
have debootstrap || missing+=(debootstrap)
have kubectl || missing+=(kubernetes-client)
have h2load || missing+=(nghttp2-client)
have promtool || missing+=(prometheus)
have stress || missing+=(stress)
have ip || missing+=(iproute2)
have iptables || missing+=(iptables)

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: nothing to install"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "install-deps: need root to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
command -v apt-get >/dev/null 2>&1 || {
  echo "install-deps: no apt-get; install by hand: ${missing[*]} (Debian's names; kubernetes-client is kubectl >= 1.22," \
       "nghttp2-client gives h2load, prometheus gives promtool)" >&2
  exit 1
}

wants() { local p; for p in "${missing[@]}"; do [ "$p" = "$1" ] && return 0; done; return 1; }
drop() {
  local p kept=()
  for p in "${missing[@]}"; do [ "$p" = "$1" ] || kept+=("$p"); done
  missing=(${kept[@]+"${kept[@]}"})
}

$sudo apt-get update -qq

if wants kubernetes-client; then
  # "1.20.5+really1.20.2-1.1+deb12u1" is 1.20.2; no candidate at all: "(none)".
  candidate=$(apt-cache policy kubernetes-client 2>/dev/null | awk '$1 == "Candidate:" { print $2 }')
  version=${candidate#*:}; version=${version##*+really}; version=${version%%-*}
  if [ -z "$candidate" ] || [ "$candidate" = "(none)" ]; then
    echo "install-deps: kubectl missing and this release has no kubernetes-client; install kubectl >= 1.22 by hand" >&2
    drop kubernetes-client
  elif ! dpkg --compare-versions "$version" ge 1.22; then
    echo "install-deps: kubectl missing; this release's kubernetes-client is $version, too old for k8s/ (kustomize" \
         "'labels' needs kubectl >= 1.22): not installed; install kubectl >= 1.22 by hand" >&2
    drop kubernetes-client
  fi
fi
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

if wants prometheus; then
  # Only promtool is wanted: the package's Prometheus would listen on :9090, where the suite's is.
  if [ -d /run/systemd/system ]; then
    $sudo systemctl disable --now prometheus >/dev/null 2>&1 || true
  else
    $sudo invoke-rc.d prometheus stop >/dev/null 2>&1 || true
    $sudo update-rc.d prometheus disable >/dev/null 2>&1 || true
  fi
fi
