package dev.grpcops.systemtest;

import com.google.gson.Gson;
import com.google.gson.reflect.TypeToken;
import dev.grpcops.cli.CliRun;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** The operator CLI, run in this JVM exactly as its main method runs it, or as its runnable jar. */
final class Cli {

    /**
     * How long one run of the jar may take: a JVM start and one admin call with the CLI's 3 s
     * deadline take a few seconds even on a loaded 2-core machine; past this, something hangs.
     */
    private static final Duration JAR_TIMEOUT = Duration.ofSeconds(60);

    private Cli() {}

    /** In this JVM, through the CLI's own test harness. */
    static Result run(String... args) {
        CliRun run = CliRun.of(args);
        return new Result(run.exit(), run.out(), run.err());
    }

    /**
     * The runnable jar in its own JVM, as an operator runs it: {@code java -jar cli/target/grpcops-cli.jar}.
     * Only {@code env} supplies GRPCOPS_ADMIN_TOKEN, whatever the test's own environment holds.
     * Output goes to files (a full pipe cannot block the child); a run that outlives
     * {@link #JAR_TIMEOUT} is killed and fails the test.
     */
    static Result runJar(Map<String, String> env, String... args) {
        List<String> command = new ArrayList<>(
                List.of(ProcessHandle.current().info().command().orElse("java"), "-jar", jar().toString()));
        command.addAll(List.of(args));
        Path out = null;
        Path err = null;
        try {
            out = Files.createTempFile("grpcops-cli-", ".out");
            err = Files.createTempFile("grpcops-cli-", ".err");
            ProcessBuilder builder = new ProcessBuilder(command)
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                    .redirectOutput(out.toFile())
                    .redirectError(err.toFile());
            builder.environment().remove("GRPCOPS_ADMIN_TOKEN");
            builder.environment().putAll(env);
            Process process = ChildProcesses.track(builder.start());
            if (!process.waitFor(JAR_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                throw new IllegalStateException(String.join(" ", args) + ": the CLI did not exit within " + JAR_TIMEOUT
                        + "; stdout: " + Files.readString(out) + "; stderr: " + Files.readString(err));
            }
            return new Result(process.exitValue(), Files.readString(out), Files.readString(err));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } finally {
            for (Path file : new Path[] {out, err}) {
                if (file != null) {
                    file.toFile().delete();
                }
            }
        }
    }

    static Path jar() {
        return Path.of(System.getProperty("grpcops.root", "..")).resolve("cli/target/grpcops-cli.jar");
    }

    record Result(int exit, String out, String err) {

        /** spread's JSON: pod → calls. */
        Map<String, Integer> pods() {
            return new Gson().fromJson(out, new TypeToken<Map<String, Integer>>() {}.getType());
        }
    }
}
