#!/usr/bin/env bash
# Installs what the test suite needs beyond Java 17 and Maven, from Debian's archive, when missing:
#   haproxy  - the connection-level (L4) balancer that plays a Kubernetes ClusterIP in the tests.
# Safe to run again: it installs only what is not there. Needs root (or sudo) on Debian/Ubuntu.
set -euo pipefail

missing=()
command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || missing+=(haproxy)

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
