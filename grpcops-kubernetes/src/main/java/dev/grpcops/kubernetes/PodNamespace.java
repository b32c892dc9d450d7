package dev.grpcops.kubernetes;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The namespace a target without one means: the pod's own, as its service account states it, else
 * the client configuration's (kubeconfig context, {@code KUBERNETES_NAMESPACE}), else
 * {@code default}, said once in the log, because a wrong namespace fails as "Service not found".
 */
final class PodNamespace {

    static final Path SERVICE_ACCOUNT_NAMESPACE = Path.of("/var/run/secrets/kubernetes.io/serviceaccount/namespace");
    private static final Logger log = LoggerFactory.getLogger(PodNamespace.class);

    private PodNamespace() {}

    static String of(Path file, String configured) {
        try {
            String namespace = Files.readString(file).trim();
            if (!namespace.isEmpty()) {
                return namespace;
            }
        } catch (IOException | SecurityException e) {
            // Not in a pod, or no service account mounted: fall through.
        }
        if (configured != null && !configured.isBlank()) {
            log.info(
                    "kubernetes:///: targets without a namespace use '{}' from the client configuration ({} not readable)",
                    configured,
                    file);
            return configured;
        }
        log.warn(
                "kubernetes:///: targets without a namespace use 'default': {} is not readable and the client"
                        + " configuration names none; write kubernetes:///<service>.<namespace>:<port>",
                file);
        return "default";
    }
}
