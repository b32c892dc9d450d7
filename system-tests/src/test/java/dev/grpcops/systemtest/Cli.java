package dev.grpcops.systemtest;

import com.google.gson.Gson;
import com.google.gson.reflect.TypeToken;
import dev.grpcops.cli.GrpcOpsCli;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The operator CLI, run in this JVM exactly as its main method runs it. */
final class Cli {

    private Cli() {
    }

    static Result run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = GrpcOpsCli.commandLine().setOut(new PrintWriter(out)).setErr(new PrintWriter(err)).execute(args);
        return new Result(exit, out.toString(), err.toString());
    }

    /** The runnable jar in its own JVM, as an operator runs it: {@code java -jar cli/target/grpcops-cli.jar}. */
    static Result runJar(Map<String, String> env, String... args) {
        List<String> command = new ArrayList<>(List.of(
                ProcessHandle.current().info().command().orElse("java"), "-jar", jar().toString()));
        command.addAll(List.of(args));
        try {
            ProcessBuilder builder = new ProcessBuilder(command);
            builder.environment().putAll(env);
            Process process = builder.start();
            String out = new String(process.getInputStream().readAllBytes());
            String err = new String(process.getErrorStream().readAllBytes());
            return new Result(process.waitFor(), out, err);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    static Path jar() {
        return Path.of(System.getProperty("grpcops.root", "..")).resolve("cli/target/grpcops-cli.jar");
    }

    record Result(int exit, String out, String err) {

        /** spread's JSON: pod → calls. */
        Map<String, Integer> pods() {
            return new Gson().fromJson(out, new TypeToken<Map<String, Integer>>() { }.getType());
        }
    }
}
