package dev.grpcops.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The alerting rules in deploy/ (design §9): promtool's own unit tests of them, and the Prometheus
 * configuration docker-compose runs, which loads them. Without promtool on PATH the tests are
 * skipped on a developer machine and fail when {@code CI=true} (scripts/install-deps.sh installs it).
 */
@Timeout(120)
class AlertRulesTests {

    private static final Path DEPLOY = Manifests.ROOT.resolve("deploy");

    @Test
    void rulesPassTheirPromtoolUnitTests() throws Exception {
        assertThat(promtool("test", "rules", "alerts-test.yml")).contains("SUCCESS");
    }

    @Test
    void prometheusInComposeLoadsTheRules() throws Exception {
        assertThat(promtool("check", "config", "prometheus.yml"))
                .contains("1 rule files found")
                .contains("alerts.yml")
                .doesNotContain("FAILED");
        assertThat(Files.readString(DEPLOY.resolveSibling("docker-compose.yml")))
                .contains("./deploy/alerts.yml:/etc/grpcops/alerts.yml:ro");
    }

    private static String promtool(String... args) throws IOException, InterruptedException {
        boolean present = Arrays.stream(System.getenv().getOrDefault("PATH", "").split(":"))
                .filter(p -> !p.isBlank())
                .anyMatch(p -> Files.isExecutable(Path.of(p, "promtool")));
        if (!present && "true".equalsIgnoreCase(System.getenv("CI"))) {
            throw new IllegalStateException("promtool is missing, and CI=true: scripts/install-deps.sh installs it"
                    + " (Debian package prometheus)");
        }
        assumeTrue(present, "promtool not installed: alert rule tests skipped");
        Path output = Files.createTempFile("promtool-", ".out");
        try {
            String[] command = new String[args.length + 1];
            command[0] = "promtool";
            System.arraycopy(args, 0, command, 1, args.length);
            Process process = new ProcessBuilder(command)
                    .directory(DEPLOY.toFile())
                    .redirectErrorStream(true)
                    .redirectOutput(output.toFile())
                    .start();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                throw new IllegalStateException("promtool " + String.join(" ", args) + " did not finish within 60 s");
            }
            String text = Files.readString(output, StandardCharsets.UTF_8);
            assertThat(process.exitValue())
                    .as("promtool " + String.join(" ", args) + ":\n" + text)
                    .isZero();
            return text;
        } finally {
            Files.deleteIfExists(output);
        }
    }
}
