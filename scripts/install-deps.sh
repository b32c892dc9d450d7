#!/usr/bin/env bash
# Installs what the test suite needs beyond Java 17 and Maven, from Debian's archive, when missing:
#   haproxy        - the connection-level (L4) balancer that plays a Kubernetes ClusterIP in the tests
#   docker.io      - a Docker engine, for the container tests and docker compose
#   docker-compose - Compose for machines without the compose plugin
#   debootstrap    - builds the local base images (scripts/local-images.sh) where no registry is reachable
# Safe to run again: it installs only what is not there. Needs root (or sudo) on Debian/Ubuntu.
set -euo pipefail

missing=()
have() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ]; }
have haproxy || missing+=(haproxy)
have dockerd || missing+=(docker.io)
have docker-compose || docker compose version >/dev/null 2>&1 || missing+=(docker-compose)
have debootstrap || missing+=(debootstrap)

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: nothing to install"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "install-deps: need root to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
command -v apt-get >/dev/null 2>&1 || { echo "install-deps: no apt-get; install by hand: ${missing[*]}" >&2; exit 1; }

echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
