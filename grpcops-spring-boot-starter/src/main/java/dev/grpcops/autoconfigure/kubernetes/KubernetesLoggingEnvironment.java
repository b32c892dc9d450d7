package dev.grpcops.autoconfigure.kubernetes;

import java.util.Map;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.env.EnvironmentPostProcessor;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.util.ClassUtils;

/**
 * One log line per API outage, not one (with a stack trace) per retry: the resolver logs when an
 * outage starts and ends, so fabric8's own per-attempt warnings are quieted, unless the
 * application sets those levels itself.
 */
public final class KubernetesLoggingEnvironment implements EnvironmentPostProcessor {

    static final String PROVIDER = "dev.grpcops.kubernetes.KubernetesNameResolverProvider";

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        if (!ClassUtils.isPresent(PROVIDER, getClass().getClassLoader())) {
            return;
        }
        // Added last: any setting of the application's own wins.
        environment
                .getPropertySources()
                .addLast(new MapPropertySource(
                        "grpcops-kubernetes-logging",
                        Map.of(
                                "logging.level.io.fabric8.kubernetes.client.informers.impl.cache.Reflector", "ERROR",
                                "logging.level.io.fabric8.kubernetes.client.dsl.internal", "WARN",
                                "logging.level.io.fabric8.kubernetes.client.jdkhttp.JdkWebSocketImpl", "ERROR")));
    }
}
