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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/** The manifests under k8s/, as typed Kubernetes objects. */
final class Manifests {

    static final Path ROOT = Path.of(System.getProperty("grpcops.root", "..")).toAbsolutePath().normalize();
    static final Path K8S = ROOT.resolve("k8s");
    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

    private Manifests() {
    }

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
            return files.filter(p -> p.toString().endsWith(".yaml") && !p.getFileName().toString().equals("kustomization.yaml"))
                    .filter(p -> !p.startsWith(K8S.resolve("target")) && !p.startsWith(K8S.resolve("src")))
                    .sorted().collect(Collectors.toList());
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

    /** {@code kubectl kustomize k8s/<dir>}: skipped without kubectl, except in CI. */
    static List<HasMetadata> render(String dir) {
        boolean kubectl = Arrays.stream(System.getenv().getOrDefault("PATH", "").split(":"))
                .anyMatch(p -> Files.isExecutable(Path.of(p, "kubectl")));
        if (!kubectl && "true".equals(System.getenv("CI"))) {
            throw new IllegalStateException("kubectl is missing, and CI=true: the overlays must be rendered in CI");
        }
        assumeTrue(kubectl, "kubectl not installed: kustomize rendering of k8s/" + dir + " skipped");
        try {
            Process process = new ProcessBuilder("kubectl", "kustomize", K8S.resolve(dir).toString())
                    .redirectErrorStream(true).start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
                throw new IllegalStateException("kubectl kustomize k8s/" + dir + " failed:\n" + output);
            }
            return parse(output);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
