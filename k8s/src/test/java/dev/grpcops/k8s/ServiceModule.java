package dev.grpcops.k8s;

import dev.grpcops.proto.chain.v1.EdgeGrpc;
import dev.grpcops.proto.chain.v1.PricingGrpc;
import dev.grpcops.proto.chain.v1.StockGrpc;
import dev.grpcops.proto.whoami.v1.WhoAmIGrpc;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.springframework.boot.convert.DurationStyle;
import org.yaml.snakeyaml.Yaml;

/** A service as its code configures it: what the manifests must agree with. */
enum ServiceModule {
    STOCK("stock", "stock-service", StockGrpc.SERVICE_NAME),
    PRICING("pricing", "pricing-service", PricingGrpc.SERVICE_NAME),
    EDGE("edge", "edge-service", EdgeGrpc.SERVICE_NAME),
    WHOAMI("whoami", "whoami-service", WhoAmIGrpc.SERVICE_NAME);

    private static final Pattern PLACEHOLDER = Pattern.compile("\\$\\{([A-Z][A-Z0-9_]*)(?::([^}]*))?}");

    final String app;
    final String module;
    /** The gRPC service name it registers, which is also its health name. */
    final String grpcService;

    private final String applicationYml;

    ServiceModule(String app, String module, String grpcService) {
        this.app = app;
        this.module = module;
        this.grpcService = grpcService;
        this.applicationYml = Manifests.read(Manifests.ROOT.resolve(module + "/src/main/resources/application.yml"));
    }

    static ServiceModule of(String app) {
        for (ServiceModule service : values()) {
            if (service.app.equals(app)) {
                return service;
            }
        }
        throw new IllegalArgumentException("no service module for app " + app);
    }

    int grpcPort() {
        return Integer.parseInt(property("grpc.server.port"));
    }

    int managementPort() {
        return Integer.parseInt(property("management.server.port"));
    }

    Duration shutdownGracePeriod() {
        return DurationStyle.detectAndParse(property("grpc.server.shutdown-grace-period"));
    }

    /** Environment variables its application.yml reads through ${NAME} placeholders. */
    Set<String> placeholderVariables() {
        Set<String> names = new TreeSet<>();
        Matcher m = PLACEHOLDER.matcher(applicationYml);
        while (m.find()) {
            names.add(m.group(1));
        }
        return names;
    }

    /** A property of application.yml, with ${NAME:default} resolved to its default. */
    private String property(String dotted) {
        Object node = new Yaml().load(applicationYml);
        for (String key : dotted.split("\\.")) {
            node = ((Map<?, ?>) node).get(key);
        }
        Matcher m = PLACEHOLDER.matcher(String.valueOf(node));
        return m.matches() ? m.group(2) : String.valueOf(node);
    }
}
