package dev.grpcops.systemtest;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A child process's standard output, line by line, read on a thread of its own: the test waits
 * for the next line with a timeout instead of blocking in {@code readLine()} on a process that
 * may never print it.
 */
final class OutputLines {

    /** Put after the last line when the output ends (the process exited or closed it). */
    static final String END = "<end of output>";

    private OutputLines() {}

    static BlockingQueue<String> of(Process process) {
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread reader = new Thread(
                () -> {
                    try (BufferedReader in = new BufferedReader(
                            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                        for (String line = in.readLine(); line != null; line = in.readLine()) {
                            lines.add(line);
                        }
                    } catch (IOException closed) {
                        // the process was stopped: the output ends here
                    } finally {
                        lines.add(END);
                    }
                },
                "output-lines-" + process.pid());
        reader.setDaemon(true);
        reader.start();
        return lines;
    }

    /** The next line, failing the test if none comes within {@code timeout} or the output ended. */
    static String next(BlockingQueue<String> lines, Duration timeout) throws InterruptedException {
        String line = lines.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(line).as("a line within " + timeout).isNotNull();
        assertThat(line).as("a line before the output ended").isNotEqualTo(END);
        return line;
    }
}
