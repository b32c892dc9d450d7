package dev.grpcops.k8s;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesList;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/** The manifests under k8s/, as typed Kubernetes objects. */
final class Manifests {

    static final Path ROOT =
            Path.of(System.getProperty("grpcops.root", "..")).toAbsolutePath().normalize();
    static final Path K8S = ROOT.resolve("k8s");
    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();
    /** One render takes well under a second; a minute means kubectl hangs. */
    private static final Duration KUBECTL_TIMEOUT = Duration.ofSeconds(60);

    private static final Map<String, List<HasMetadata>> RENDERED = new ConcurrentHashMap<>();

    private Manifests() {}

    /** Every object of a (multi-document) YAML text. */
    static List<HasMetadata> parse(String yaml) {
        List<HasMetadata> objects = new ArrayList<>();
        for (String document : yaml.split("(?m)^---\\s*$")) {
            if (document.lines().allMatch(line -> line.isBlank() || line.trim().startsWith("#"))) {
                continue;
            }
            Object parsed = SERIALIZATION.unmarshal(document);
            if (parsed instanceof KubernetesList list) {
                objects.addAll(list.getItems());
            } else {
                objects.add((HasMetadata) parsed);
            }
        }
        return objects;
    }

    /** Every YAML file under k8s/ that holds Kubernetes objects (kustomization files do not). */
    static List<Path> objectFiles() {
        try (var files = Files.walk(K8S)) {
            return files.filter(p -> p.toString().endsWith(".yaml")
                            && !p.getFileName().toString().equals("kustomization.yaml"))
                    .filter(p -> !p.startsWith(K8S.resolve("target")) && !p.startsWith(K8S.resolve("src")))
                    .sorted()
                    .collect(Collectors.toList());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * {@code kubectl kustomize k8s/<dir>}, once per directory and run. Without kubectl on PATH the
     * test is skipped with a message on a developer machine, and fails when {@code CI=true}.
     */
    static List<HasMetadata> render(String dir) {
        boolean kubectl = Arrays.stream(System.getenv().getOrDefault("PATH", "").split(":"))
                .filter(p -> !p.isBlank())
                .anyMatch(p -> Files.isExecutable(Path.of(p, "kubectl")));
        if (!kubectl && isCi()) {
            throw new IllegalStateException("kubectl is missing, and CI=true: the overlays must be rendered in CI"
                    + " (scripts/install-deps.sh installs kubectl >= 1.22 where the release has one)");
        }
        assumeTrue(kubectl, "kubectl not installed: kustomize rendering of k8s/" + dir + " skipped");
        return RENDERED.computeIfAbsent(dir, Manifests::kustomize);
    }

    /** Output to a file, not a pipe: a kubectl that hangs is killed at {@link #KUBECTL_TIMEOUT}, not waited on forever. */
    private static List<HasMetadata> kustomize(String dir) {
        Path output = null;
        try {
            output = Files.createTempFile("kustomize-", ".yaml");
            Process process = new ProcessBuilder(
                            "kubectl", "kustomize", K8S.resolve(dir).toString())
                    .redirectErrorStream(true)
                    .redirectOutput(output.toFile())
                    .start();
            if (!process.waitFor(KUBECTL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                throw new IllegalStateException("kubectl kustomize k8s/" + dir + " did not finish within "
                        + KUBECTL_TIMEOUT + ":\n" + Files.readString(output, StandardCharsets.UTF_8));
            }
            String rendered = Files.readString(output, StandardCharsets.UTF_8);
            if (process.exitValue() != 0) {
                throw new IllegalStateException("kubectl kustomize k8s/" + dir + " failed:\n" + rendered);
            }
            return List.copyOf(parse(rendered));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } finally {
            if (output != null) {
                output.toFile().delete();
            }
        }
    }

    /** {@code CI=true} (any case) or {@code CI=1}, as CI services set it. */
    private static boolean isCi() {
        String ci = System.getenv("CI");
        return ci != null && (ci.equalsIgnoreCase("true") || ci.equals("1"));
    }
}
