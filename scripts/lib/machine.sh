# Sourced by the benchmark scripts: which machine a figure was measured on. The figures depend on
# the CPU model as much as on the CPU count (an Intel Xeon and an AMD EPYC of two vCPUs each differ
# by a factor at some loads), so every report names it.

# The CPU's model name, "unknown CPU" where /proc/cpuinfo has none (some ARM kernels).
cpu_model() {
  local model
  model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null) || true
  echo "${model:-unknown CPU}"
}

# "2 CPUs (AMD EPYC), 24 GiB, load average 0.10 0.25 0.30"
machine_line() {
  echo "$(nproc) CPUs ($(cpu_model)), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), load average $(cut -d' ' -f1-3 /proc/loadavg)"
}
