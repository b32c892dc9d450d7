#!/usr/bin/env python3
"""Where a server's CPU samples fell, from async-profiler's collapsed stacks (scripts/bench.sh
BENCH_PROFILE): one column per file, one row per part of the process, as % of its samples.

Each sample goes to the part whose code is nearest its leaf: the library (by package), the
services, Micrometer, Spring, net.devh, gRPC, Netty, protobuf... ; a sample in JDK or native code
goes to the Java code that called it. Samples in the JIT compiler's threads are left out.

    python3 scripts/lib/profile_summary.py a-round-1-edge.collapsed b-round-1-edge.collapsed
"""
import collections
import os
import re
import sys

PARTS = (
    ("io/micrometer", "Micrometer"),
    ("io/prometheus", "Prometheus client"),
    ("net/devh", "net.devh"),
    ("org/springframework", "Spring"),
    ("io/grpc/netty", "Netty (grpc-netty-shaded)"),
    ("io/netty", "Netty"),
    ("io/grpc/", "grpc-java"),
    ("com/google/protobuf", "protobuf"),
    ("com/google/common", "Guava"),
    ("io/opentelemetry", "OpenTelemetry"),
    ("ch/qos/logback", "Logback"),
    ("org/slf4j", "SLF4J"),
)
SERVICES = ("proto", "edge", "pricing", "stock", "bench", "chain", "whoami")


def part(frame):
    if frame.startswith("dev/grpcops/"):
        package = frame.split("/")[2]
        if package in SERVICES:
            return "services and contracts"
        return "grpcops " + package
    for prefix, name in PARTS:
        if frame.startswith(prefix):
            return name
    return None


def summarize(path):
    parts = collections.Counter()
    total = 0
    with open(path) as stacks:
        for line in stacks:
            stack, _, count = line.rstrip().rpartition(" ")
            if not count.isdigit() or re.search(r"CompilerThre|CompileBroker", stack):
                continue
            frames = stack.split(";")
            name = next((p for p in map(part, reversed(frames)) if p), None)
            if name is None:
                name = "JDK only" if any("/" in f for f in frames) else "JVM (GC, runtime)"
            parts[name] += int(count)
            total += int(count)
    return total, parts


def main(paths):
    results = [summarize(p) for p in paths]
    names = sorted({n for _, parts in results for n in parts},
                   key=lambda n: -max(parts[n] / total if total else 0 for total, parts in results))
    print("| part | " + " | ".join(os.path.basename(p).replace(".collapsed", "") for p in paths) + " |")
    print("|---|" + "---:|" * len(paths))
    for name in names:
        cells = [f"{100 * parts[name] / total:.1f} %" if total else "-" for total, parts in results]
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("| samples (2 ms of CPU each) | " + " | ".join(str(total) for total, _ in results) + " |")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
