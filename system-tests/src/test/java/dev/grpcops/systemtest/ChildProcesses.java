package dev.grpcops.systemtest;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Every process the tests start, killed when the test JVM exits: a test that timed out, or a fork
 * that surefire stops, leaves no service, balancer or CLI running behind it.
 */
final class ChildProcesses {

    private static final Set<Process> LIVE = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime()
                .addShutdownHook(new Thread(() -> LIVE.forEach(Process::destroyForcibly), "kill-test-child-processes"));
    }

    private ChildProcesses() {}

    static Process track(Process process) {
        LIVE.add(process);
        process.onExit().thenRun(() -> LIVE.remove(process));
        return process;
    }
}
