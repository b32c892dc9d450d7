package dev.grpcops.systemtest;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A node of its own on this machine: a Linux network namespace joined to the host by a veth pair,
 * {@link #address} inside, {@link #hostAddress} the host's end (what a process inside reaches the
 * host's services on). It goes silent as a node whose network is cut does ({@link #silence}: every
 * packet in and out dropped, no FIN, no RST), or never answers new connections ({@link
 * #dropNewConnections}: incoming SYNs dropped), and comes back ({@link #heal}). The drops are
 * iptables rules inside the namespace: the host's own firewall, routes and sysctls are not touched
 * beyond the veth's /30. Needs root ({@link #requireRoot}): without it the tests using it are skipped.
 *
 * <p>Namespaces are named {@value #PREFIX}{@code <role>}; each records the test JVM that made it in
 * {@code java.io.tmpdir/grpcops-netns/}. {@link #removeLeftovers} deletes those whose JVM is gone (a
 * run that was killed), with every process still inside them; a namespace is deleted on {@link
 * #close}, and at the latest when the test JVM exits.
 */
final class NetworkNamespace implements AutoCloseable {

    static final String PREFIX = "gops-it-";

    private static final String IP = tool("ip");
    private static final String IPTABLES = tool("iptables");
    private static final Path OWNERS = Path.of(System.getProperty("java.io.tmpdir"), "grpcops-netns");
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(20);
    private static final Set<NetworkNamespace> LIVE = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> LIVE.forEach(NetworkNamespace::deleteQuietly), "delete-test-network-namespaces"));
    }

    final String name;
    /** The namespace's end of the veth: where its processes listen. */
    final String address;
    /** The host's end of the veth: where processes inside reach the host. */
    final String hostAddress;

    private NetworkNamespace(String name, String address, String hostAddress) {
        this.name = name;
        this.address = address;
        this.hostAddress = hostAddress;
    }

    /**
     * Skips the calling test unless this JVM runs as root (effective uid 0): namespaces, veth pairs
     * and iptables need it. As root, a missing {@code ip} or {@code iptables} fails instead.
     */
    static void requireRoot() {
        assumeTrue(
                effectiveUid() == 0,
                "not root: the silent-node tests cut a replica's network in a network namespace of their own"
                        + " (ip netns, veth, iptables), which needs root; skipped");
        for (String tool : List.of(IP, IPTABLES)) {
            if (!Files.isExecutable(Path.of(tool))) {
                throw new IllegalStateException(tool + " is missing: the silent-node tests need iproute2 and iptables");
            }
        }
    }

    /**
     * A namespace {@value #PREFIX}{@code role} (role: a few letters, e.g. "s3"), its veth on the first
     * 10.213.N.0/30 that the host does not route yet.
     */
    static NetworkNamespace create(String role) {
        String name = PREFIX + role;
        if (name.length() > 13) {
            throw new IllegalArgumentException(name + ": at most 13 characters (its veth ends add 2, Linux allows 15)");
        }
        String routes = run(IP, "-4", "route", "show").out()
                + run(IP, "-4", "-o", "addr", "show").out();
        int subnet = -1;
        for (int n = 0; n < 256 && subnet < 0; n++) {
            if (!routes.contains("10.213." + n + ".")) {
                subnet = n;
            }
        }
        if (subnet < 0) {
            throw new IllegalStateException("no free 10.213.N.0/30 for " + name);
        }
        NetworkNamespace ns = new NetworkNamespace(name, "10.213." + subnet + ".2", "10.213." + subnet + ".1");
        // Fails when a run still going holds this name: its namespace is left alone.
        run(IP, "netns", "add", name);
        LIVE.add(ns);
        try {
            Files.createDirectories(OWNERS);
            Files.writeString(
                    OWNERS.resolve(name), Long.toString(ProcessHandle.current().pid()));
            run(IP, "link", "add", name + "-h", "type", "veth", "peer", "name", name + "-n");
            run(IP, "link", "set", name + "-n", "netns", name);
            run(IP, "addr", "add", ns.hostAddress + "/30", "dev", name + "-h");
            run(IP, "link", "set", name + "-h", "up");
            run(IP, "-n", name, "addr", "add", ns.address + "/30", "dev", name + "-n");
            run(IP, "-n", name, "link", "set", name + "-n", "up");
            run(IP, "-n", name, "link", "set", "lo", "up");
            return ns;
        } catch (IOException | RuntimeException e) {
            ns.close();
            throw e instanceof IOException io ? new UncheckedIOException(io) : (RuntimeException) e;
        }
    }

    /**
     * Deletes the namespaces (and veth host ends) {@value #PREFIX}* that an earlier test JVM made and
     * left behind, killing what still runs inside them; those of a test JVM still running are kept.
     */
    static void removeLeftovers() {
        for (String line : run(IP, "netns", "list").out().lines().toList()) {
            String name = line.split("\\s+")[0];
            if (name.startsWith(PREFIX) && !ownerAlive(name)) {
                new NetworkNamespace(name, "", "").deleteQuietly();
                System.out.println("silent-node: removed network namespace " + name + " left by an earlier run");
            }
        }
        Matcher veth = Pattern.compile("^\\d+: (" + Pattern.quote(PREFIX) + "[^@:]*-h)[@:]", Pattern.MULTILINE)
                .matcher(run(IP, "-o", "link", "show", "type", "veth").out());
        while (veth.find()) {
            String name = veth.group(1).substring(0, veth.group(1).length() - 2);
            if (!ownerAlive(name)) {
                runQuietly(IP, "link", "del", veth.group(1));
            }
        }
    }

    /** Every packet in and out of the namespace is dropped: its processes neither hear nor answer. */
    void silence() {
        addRule("INPUT", "-j", "DROP");
        addRule("OUTPUT", "-j", "DROP");
    }

    /** New connections to the namespace are dropped (SYN); established ones still work. */
    void dropNewConnections() {
        addRule("INPUT", "-p", "tcp", "--syn", "-j", "DROP");
    }

    /** Removes every drop {@link #silence} and {@link #dropNewConnections} added. */
    void heal() {
        deleteRule("INPUT", "-j", "DROP");
        deleteRule("OUTPUT", "-j", "DROP");
        deleteRule("INPUT", "-p", "tcp", "--syn", "-j", "DROP");
    }

    /** The command prefix that runs a program inside this namespace (it execs the program). */
    List<String> exec() {
        return List.of(IP, "netns", "exec", name);
    }

    /** Kills what runs inside, deletes the namespace (its veth pair goes with it). */
    @Override
    public void close() {
        deleteQuietly();
    }

    private void deleteQuietly() {
        LIVE.remove(this);
        for (String pid : runQuietly(IP, "netns", "pids", name).lines().toList()) {
            ProcessHandle.of(Long.parseLong(pid.trim())).ifPresent(ProcessHandle::destroy);
        }
        for (String pid : runQuietly(IP, "netns", "pids", name).lines().toList()) {
            ProcessHandle.of(Long.parseLong(pid.trim())).ifPresent(process -> {
                try {
                    process.onExit().get(10, TimeUnit.SECONDS);
                } catch (Exception notYet) {
                    process.destroyForcibly();
                }
            });
        }
        runQuietly(IP, "netns", "del", name);
        runQuietly(IP, "link", "del", name + "-h"); // gone with the namespace, unless it was left by a failed create
        try {
            Files.deleteIfExists(OWNERS.resolve(name));
        } catch (IOException ignored) {
            // the next run's removeLeftovers finds the namespace gone
        }
    }

    private void addRule(String... rule) {
        if (runInside(true, "-C", rule).exit() != 0) {
            runInside(false, "-I", rule);
        }
    }

    private void deleteRule(String... rule) {
        while (runInside(true, "-C", rule).exit() == 0) {
            runInside(false, "-D", rule);
        }
    }

    private Result runInside(boolean quiet, String op, String... rule) {
        List<String> command = new ArrayList<>(List.of(IP, "netns", "exec", name, IPTABLES, "-w", op));
        command.addAll(List.of(rule));
        return quiet ? execute(command) : check(command, execute(command));
    }

    private static boolean ownerAlive(String name) {
        try {
            long pid = Long.parseLong(Files.readString(OWNERS.resolve(name)).trim());
            return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
        } catch (IOException | NumberFormatException e) {
            return false;
        }
    }

    private static long effectiveUid() {
        try {
            return Files.readAllLines(Path.of("/proc/self/status")).stream()
                    .filter(line -> line.startsWith("Uid:"))
                    .map(line -> Long.parseLong(line.split("\\s+")[2]))
                    .findFirst()
                    .orElse(-1L);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    private static String tool(String name) {
        for (String dir : List.of("/usr/sbin", "/sbin", "/usr/bin", "/bin")) {
            if (Files.isExecutable(Path.of(dir, name))) {
                return dir + "/" + name;
            }
        }
        return "/usr/sbin/" + name;
    }

    private record Result(int exit, String out) {}

    private static Result run(String... command) {
        List<String> list = List.of(command);
        return check(list, execute(list));
    }

    private static String runQuietly(String... command) {
        return execute(List.of(command)).out();
    }

    private static Result check(List<String> command, Result result) {
        if (result.exit() != 0) {
            throw new IllegalStateException(
                    String.join(" ", command) + " exited " + result.exit() + ": " + result.out());
        }
        return result;
    }

    private static Result execute(List<String> command) {
        try {
            Process process =
                    new ProcessBuilder(command).redirectErrorStream(true).start();
            process.getOutputStream().close();
            byte[] out = process.getInputStream().readAllBytes(); // these commands print a few lines at most
            if (!process.waitFor(COMMAND_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + " did not exit within " + COMMAND_TIMEOUT);
            }
            return new Result(process.exitValue(), new String(out, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
