package dev.grpcops.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import dev.grpcops.autoconfigure.server.MaxConnectionAgeEnvironment;
import dev.grpcops.kubernetes.KubernetesNameResolverProvider;
import dev.grpcops.spring.admin.AdminProperties;
import dev.grpcops.spring.shutdown.ShutdownProperties;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The manifests held against the code: what a cluster would get wrong silently. Several tests
 * run {@code kubectl kustomize}; each render is bounded in {@link Manifests}, each test here too.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ManifestTests {

    private static final Pattern HEADLESS_TARGET =
            Pattern.compile("dns:///([a-z0-9-]+)-headless\\.grpcops\\.svc\\.cluster\\.local:(\\d+)");
    /** kubernetes:///service.namespace:port-name, the form the resolver takes. */
    private static final Pattern KUBERNETES_TARGET =
            Pattern.compile(KubernetesNameResolverProvider.SCHEME + ":///([a-z0-9-]+)\\.([a-z0-9-]+):([a-z0-9-]+)");
    /** Who calls whom in the chain. */
    private static final Map<String, String> DOWNSTREAM = Map.of("pricing", "stock", "edge", "pricing");

    static Stream<Path> objectFiles() {
        return Manifests.objectFiles().stream();
    }

    @ParameterizedTest
    @MethodSource("objectFiles")
    void everyManifestParsesIntoTypedObjectsWithNoUnknownField(Path file) {
        List<HasMetadata> objects = Manifests.parse(Manifests.read(file));
        assertThat(objects).isNotEmpty();
        for (HasMetadata object : objects) {
            assertThat(UnknownFields.in(object))
                    .as(file + ": " + object.getKind() + " "
                            + object.getMetadata().getName())
                    .isEmpty();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"base", "overlays/lab", "overlays/prod"})
    void everyKustomizationRendersIntoKnownObjects(String dir) {
        List<HasMetadata> objects = Manifests.render(dir);
        assertThat(objects).extracting(HasMetadata::getKind).contains("Namespace", "Deployment", "Service");
        for (HasMetadata object : objects) {
            assertThat(UnknownFields.in(object))
                    .as(dir + ": " + object.getKind() + " "
                            + object.getMetadata().getName())
                    .isEmpty();
            if (!object.getKind().equals("Namespace")) {
                assertThat(object.getMetadata().getNamespace())
                        .as(object.getMetadata().getName())
                        .isEqualTo("grpcops");
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"overlays/lab", "overlays/prod"})
    void probesAskForTheNamesTheServicesRegister(String dir) {
        for (Deployment deployment : serviceDeployments(dir)) {
            ServiceModule service = ServiceModule.of(app(deployment));
            Container container = container(deployment);
            assertThat(container.getReadinessProbe().getGrpc().getService())
                    .as(service.app + " readiness")
                    .isEqualTo(service.grpcService);
            assertThat(container.getReadinessProbe().getGrpc().getPort()).isEqualTo(service.grpcPort());
            // Naming the service in liveness would restart a drained pod.
            assertThat(container.getLivenessProbe().getGrpc().getService())
                    .as(service.app + " liveness")
                    .isNullOrEmpty();
            assertThat(container.getLivenessProbe().getGrpc().getPort()).isEqualTo(service.grpcPort());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"overlays/lab", "overlays/prod"})
    void containerPortsAreThePortsTheServicesListenOn(String dir) {
        for (Deployment deployment : serviceDeployments(dir)) {
            ServiceModule service = ServiceModule.of(app(deployment));
            Map<String, Integer> ports = container(deployment).getPorts().stream()
                    .collect(Collectors.toMap(ContainerPort::getName, ContainerPort::getContainerPort));
            assertThat(ports)
                    .as(service.app)
                    .containsEntry("grpc", service.grpcPort())
                    .containsEntry("http", service.managementPort());
            assertThat(deployment.getSpec().getTemplate().getMetadata().getAnnotations())
                    .containsEntry("prometheus.io/port", String.valueOf(service.managementPort()))
                    .containsEntry("prometheus.io/path", "/actuator/prometheus");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"overlays/lab", "overlays/prod"})
    void selectorsMatchThePodLabels(String dir) {
        List<HasMetadata> objects = Manifests.render(dir);
        List<Deployment> deployments = of(objects, Deployment.class);
        for (Deployment deployment : deployments) {
            assertThat(deployment.getSpec().getTemplate().getMetadata().getLabels())
                    .containsAllEntriesOf(deployment.getSpec().getSelector().getMatchLabels());
        }
        for (Service service : of(objects, Service.class)) {
            Map<String, String> selector = service.getSpec().getSelector();
            assertThat(deployments)
                    .as("pods selected by Service " + service.getMetadata().getName())
                    .anySatisfy(d -> assertThat(
                                    d.getSpec().getTemplate().getMetadata().getLabels())
                            .containsAllEntriesOf(selector));
        }
        for (PodDisruptionBudget budget : of(objects, PodDisruptionBudget.class)) {
            assertThat(deployments)
                    .anySatisfy(d -> assertThat(
                                    d.getSpec().getTemplate().getMetadata().getLabels())
                            .containsAllEntriesOf(budget.getSpec().getSelector().getMatchLabels()));
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"overlays/lab", "overlays/prod"})
    void everyEnvironmentVariableIsOneTheCodeReads(String dir) {
        String adminToken = AdminProperties.class
                        .getAnnotation(ConfigurationProperties.class)
                        .value()
                        .replace('.', '_')
                        .toUpperCase()
                + "_TOKEN";
        String ledgerToken = dev.grpcops.spring.budget.BudgetProperties.class
                        .getAnnotation(ConfigurationProperties.class)
                        .value()
                        .replace('.', '_')
                        .toUpperCase()
                + "_LEDGER_TOKEN";
        for (Deployment deployment : of(Manifests.render(dir), Deployment.class)) {
            Set<String> read = new HashSet<>(Set.of(MaxConnectionAgeEnvironment.VARIABLE, adminToken, ledgerToken));
            if (!app(deployment).equals("client")) {
                read.addAll(ServiceModule.of(app(deployment)).placeholderVariables());
            }
            assertThat(container(deployment).getEnv())
                    .extracting(EnvVar::getName)
                    .as(app(deployment))
                    .isSubsetOf(read);
        }
    }

    /** Only WhoAmI has admin methods, and the client calls them: no other pod gets the token. */
    @ParameterizedTest
    @ValueSource(strings = {"overlays/lab", "overlays/prod"})
    void adminTokenReachesOnlyWhoAmIAndTheClient(String dir) {
        String adminToken = AdminProperties.class
                        .getAnnotation(ConfigurationProperties.class)
                        .value()
                        .replace('.', '_')
                        .toUpperCase()
                + "_TOKEN";
        for (Deployment deployment : of(Manifests.render(dir), Deployment.class)) {
            List<String> env =
                    container(deployment).getEnv().stream().map(EnvVar::getName).toList();
            if (Set.of("whoami", "client").contains(app(deployment))) {
                assertThat(env).as(app(deployment)).contains(adminToken);
            } else {
                assertThat(env).as(app(deployment)).doesNotContain(adminToken);
            }
        }
    }

    /** The ledger's own token reaches the chain and the client, optionally: the ledger is off without it. */
    @ParameterizedTest
    @ValueSource(strings = {"overlays/lab", "overlays/prod"})
    void theLedgerTokenReachesTheChainAndTheClientOptionally(String dir) {
        for (Deployment deployment : of(Manifests.render(dir), Deployment.class)) {
            var ledger = container(deployment).getEnv().stream()
                    .filter(env -> env.getName().equals("GRPCOPS_BUDGET_LEDGER_TOKEN"))
                    .toList();
            if (Set.of("stock", "pricing", "edge", "client").contains(app(deployment))) {
                assertThat(ledger)
                        .as(app(deployment))
                        .singleElement()
                        .satisfies(env -> assertThat(
                                        env.getValueFrom().getSecretKeyRef().getOptional())
                                .isTrue());
            } else {
                assertThat(ledger).as(app(deployment)).isEmpty();
            }
        }
    }

    /** No overlay ships a token: the pods read the Secrets the operator creates. */
    @ParameterizedTest
    @ValueSource(strings = {"base", "overlays/lab", "overlays/prod"})
    void adminTokenComesFromAnExternallyCreatedSecret(String dir) {
        List<HasMetadata> objects = Manifests.render(dir);
        assertThat(objects).extracting(HasMetadata::getKind).doesNotContain("Secret");
        for (Deployment deployment : of(objects, Deployment.class)) {
            container(deployment).getEnv().stream()
                    .filter(e -> e.getName().endsWith("_TOKEN"))
                    .forEach(env -> {
                        assertThat(env.getValue())
                                .as(app(deployment) + " " + env.getName())
                                .isNull();
                        assertThat(env.getValueFrom().getSecretKeyRef().getName())
                                .isEqualTo(
                                        env.getName().equals("GRPCOPS_BUDGET_LEDGER_TOKEN")
                                                ? "grpcops-ledger"
                                                : "grpcops-admin");
                        assertThat(env.getValueFrom().getSecretKeyRef().getKey())
                                .isEqualTo(env.getName());
                    });
        }
    }

    /** The management port (Actuator) is internal: Prometheus scrapes pods directly, no Service exposes it. */
    @ParameterizedTest
    @ValueSource(strings = {"overlays/lab", "overlays/prod"})
    void noServiceExposesTheManagementPort(String dir) {
        Set<Integer> managementPorts = serviceDeployments(dir).stream()
                .map(d -> ServiceModule.of(app(d)).managementPort())
                .collect(Collectors.toSet());
        for (Service service : of(Manifests.render(dir), Service.class)) {
            assertThat(service.getSpec().getPorts())
                    .as(service.getMetadata().getName())
                    .allSatisfy(port -> {
                        assertThat(port.getPort()).isNotIn(managementPorts);
                        assertThat(port.getTargetPort().getStrVal()).isNotEqualTo("http");
                    });
        }
    }

    @Test
    void imagesAreTheOnesComposeBuilds() {
        String compose = Manifests.read(Manifests.ROOT.resolve("docker-compose.yml"));
        for (Deployment deployment : of(Manifests.render("base"), Deployment.class)) {
            String image = container(deployment).getImage();
            String name = image.substring(0, image.lastIndexOf(':'));
            String module = name.substring("grpcops/".length());
            assertThat(name).startsWith("grpcops/");
            assertThat(Files.isRegularFile(Manifests.ROOT.resolve(module + "/target/" + module + ".jar"))
                            || Files.isDirectory(Manifests.ROOT.resolve(module)))
                    .as(module + " is a module of the build")
                    .isTrue();
            assertThat(compose).as("docker-compose.yml builds " + image).contains("image: " + image);
            if (!module.equals("cli")) {
                assertThat(compose).as("deploy/Dockerfile builds " + image).contains("SERVICE: " + module);
            }
        }
    }

    @Test
    void whoamiIsWhatSpecSection7Says() {
        List<HasMetadata> base = Manifests.render("base");
        Deployment whoami = named(of(base, Deployment.class), "whoami");
        assertThat(whoami.getSpec().getReplicas()).isEqualTo(3);
        assertThat(whoami.getSpec().getSelector().getMatchLabels()).containsEntry("app", "whoami");
        Container container = container(whoami);
        assertThat(container.getReadinessProbe().getPeriodSeconds()).isEqualTo(2);
        assertThat(container.getReadinessProbe().getFailureThreshold()).isEqualTo(1);
        assertThat(container.getLivenessProbe().getPeriodSeconds()).isEqualTo(5);
        assertThat(container.getEnv()).anySatisfy(env -> {
            assertThat(env.getName()).isEqualTo("POD_NAME");
            assertThat(env.getValueFrom().getFieldRef().getFieldPath()).isEqualTo("metadata.name");
        });

        Service clusterIp = named(of(base, Service.class), "whoami");
        assertThat(clusterIp.getSpec().getType()).isEqualTo("ClusterIP");
        assertThat(clusterIp.getSpec().getClusterIP()).isNull();
        Service headless = named(of(base, Service.class), "whoami-headless");
        assertThat(headless.getSpec().getClusterIP()).isEqualTo("None");
        for (Service service : List.of(clusterIp, headless)) {
            assertThat(service.getSpec().getSelector()).isEqualTo(Map.of("app", "whoami"));
            assertThat(service.getSpec().getPorts())
                    .anySatisfy(p -> assertThat(p.getPort()).isEqualTo(50051));
        }

        assertThat(env(
                        named(of(Manifests.render("overlays/lab"), Deployment.class), "whoami"),
                        "MAX_CONNECTION_AGE_MS"))
                .isEqualTo("1000");
        assertThat(Long.parseLong(env(
                        named(of(Manifests.render("overlays/prod"), Deployment.class), "whoami"),
                        "MAX_CONNECTION_AGE_MS")))
                .as("minutes in production")
                .isGreaterThanOrEqualTo(60_000);
    }

    /** The base, and the lab that keeps it so that both resolvers can be compared (prod: see below). */
    @ParameterizedTest
    @ValueSource(strings = {"base", "overlays/lab"})
    void chainServicesCallTheirDownstreamThroughItsHeadlessService(String dir) {
        List<HasMetadata> base = Manifests.render(dir);
        DOWNSTREAM.forEach((caller, callee) -> {
            String args = String.join(
                    " ", container(named(of(base, Deployment.class), caller)).getArgs());
            Matcher target = HEADLESS_TARGET.matcher(args);
            assertThat(target.find()).as(caller + " args: " + args).isTrue();
            assertThat(target.group(1)).isEqualTo(callee);
            assertThat(Integer.parseInt(target.group(2)))
                    .isEqualTo(ServiceModule.of(callee).grpcPort());
            Service headless = named(of(base, Service.class), callee + "-headless");
            assertThat(headless.getSpec().getClusterIP()).isEqualTo("None");
            assertThat(headless.getSpec().getPorts())
                    .anySatisfy(p -> assertThat(p.getPort())
                            .isEqualTo(ServiceModule.of(callee).grpcPort()));
        });
    }

    /**
     * Production resolves Pricing and Stock through their EndpointSlices: the target is one the
     * resolver takes (its scheme, a Service and port name that exist), the service has the module,
     * and its pod runs as a ServiceAccount bound to a Role granting what the resolver watches.
     */
    @Test
    void productionCallsDownstreamThroughTheKubernetesResolverWithTheRbacItNeeds() {
        List<HasMetadata> prod = Manifests.render("overlays/prod");
        DOWNSTREAM.forEach((caller, callee) -> {
            Deployment deployment = named(of(prod, Deployment.class), caller);
            String args = String.join(" ", container(deployment).getArgs());
            Matcher target = KUBERNETES_TARGET.matcher(args);
            assertThat(target.find()).as(caller + " args: " + args).isTrue();
            assertThat(target.group(2)).isEqualTo("grpcops");
            Service service = named(of(prod, Service.class), target.group(1));
            assertThat(service.getSpec().getSelector()).containsEntry("app", callee);
            assertThat(service.getSpec().getPorts())
                    .as("port named " + target.group(3))
                    .anySatisfy(p -> {
                        assertThat(p.getName()).isEqualTo(target.group(3));
                        assertThat(p.getPort())
                                .isEqualTo(ServiceModule.of(callee).grpcPort());
                    });
            assertThat(Manifests.read(Manifests.ROOT.resolve(ServiceModule.of(caller).module + "/pom.xml")))
                    .as(caller + " has the resolver on its classpath")
                    .contains("<artifactId>grpcops-kubernetes</artifactId>");

            var pod = deployment.getSpec().getTemplate().getSpec();
            assertThat(pod.getAutomountServiceAccountToken())
                    .as(caller + " mounts its token for the resolver")
                    .isTrue();
            String account = pod.getServiceAccountName();
            assertThat(account).as(caller + " runs as its own ServiceAccount").isEqualTo(caller);
            assertThat(of(prod, io.fabric8.kubernetes.api.model.ServiceAccount.class))
                    .extracting(a -> a.getMetadata().getName())
                    .contains(account);
            assertThat(rulesBoundTo(prod, account))
                    .as(caller + " may watch what the resolver watches")
                    .anySatisfy(rule -> assertThat(grants(rule)).isTrue());
        });
    }

    /** Least privilege: every Role grants get/list/watch on endpointslices, nothing more, nothing else. */
    @ParameterizedTest
    @ValueSource(strings = {"overlays/lab", "overlays/prod"})
    void rolesGrantOnlyWhatTheResolverWatches(String dir) {
        List<Role> roles = of(Manifests.render(dir), Role.class);
        assertThat(roles).isNotEmpty();
        String[] resource = KubernetesNameResolverProvider.WATCHED_RESOURCE.split("\\.", 2);
        for (Role role : roles) {
            assertThat(role.getRules()).as(role.getMetadata().getName()).allSatisfy(rule -> {
                assertThat(rule.getApiGroups()).containsExactly(resource[1]);
                assertThat(rule.getResources()).containsExactly(resource[0]);
                assertThat(rule.getVerbs()).containsExactlyInAnyOrderElementsOf(KubernetesNameResolverProvider.VERBS);
            });
        }
    }

    /** Pods whose channels do not use kubernetes:/// carry no API token at all. */
    @ParameterizedTest
    @ValueSource(strings = {"base", "overlays/lab", "overlays/prod"})
    void onlyPodsThatWatchTheApiMountAToken(String dir) {
        for (Deployment deployment : of(Manifests.render(dir), Deployment.class)) {
            boolean watches = container(deployment).getArgs() != null
                    && container(deployment).getArgs().stream()
                            .anyMatch(a -> a.contains(KubernetesNameResolverProvider.SCHEME + ":///"));
            assertThat(deployment.getSpec().getTemplate().getSpec().getAutomountServiceAccountToken())
                    .as(dir + " " + app(deployment))
                    .isEqualTo(watches);
        }
    }

    private static List<PolicyRule> rulesBoundTo(List<HasMetadata> objects, String serviceAccount) {
        return of(objects, RoleBinding.class).stream()
                .filter(b -> b.getSubjects().stream()
                        .anyMatch(s -> s.getKind().equals("ServiceAccount")
                                && s.getName().equals(serviceAccount)))
                .filter(b -> b.getRoleRef().getKind().equals("Role"))
                .map(b -> named(of(objects, Role.class), b.getRoleRef().getName()))
                .flatMap(r -> r.getRules().stream())
                .toList();
    }

    private static boolean grants(PolicyRule rule) {
        String[] resource = KubernetesNameResolverProvider.WATCHED_RESOURCE.split("\\.", 2);
        return rule.getApiGroups().contains(resource[1])
                && rule.getResources().contains(resource[0])
                && rule.getVerbs().containsAll(KubernetesNameResolverProvider.VERBS);
    }

    @Test
    void podsAreHardenedAndStopInTimeToDrain() {
        long drain = new ShutdownProperties().getDrainDelay().toSeconds();
        for (Deployment deployment : of(Manifests.render("base"), Deployment.class)) {
            var pod = deployment.getSpec().getTemplate().getSpec();
            assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
            assertThat(pod.getAutomountServiceAccountToken()).isFalse();
            var security = container(deployment).getSecurityContext();
            assertThat(security.getReadOnlyRootFilesystem()).isTrue();
            assertThat(security.getAllowPrivilegeEscalation()).isFalse();
            assertThat(security.getCapabilities().getDrop()).containsExactly("ALL");
            assertThat(container(deployment).getResources().getRequests()).containsKeys("cpu", "memory");
            if (!app(deployment).equals("client")) {
                long grace =
                        ServiceModule.of(app(deployment)).shutdownGracePeriod().toSeconds();
                assertThat(pod.getTerminationGracePeriodSeconds())
                        .as(app(deployment) + ": drain delay + grace for calls in flight, before SIGKILL")
                        .isGreaterThan(drain + grace);
            }
        }
    }

    @Test
    void productionRunsSeveralReplicasWithBudgetsAndAutoscaling() {
        List<HasMetadata> prod = Manifests.render("overlays/prod");
        for (Deployment deployment : serviceDeployments("overlays/prod")) {
            assertThat(deployment.getSpec().getReplicas()).as(app(deployment)).isGreaterThanOrEqualTo(2);
            assertThat(deployment.getSpec().getTemplate().getSpec().getTopologySpreadConstraints())
                    .isNotEmpty();
            assertThat(of(prod, PodDisruptionBudget.class))
                    .extracting(b -> b.getMetadata().getName())
                    .contains(app(deployment));
        }
        assertThat(of(prod, HorizontalPodAutoscaler.class))
                .extracting(h -> h.getSpec().getScaleTargetRef().getName())
                .containsExactlyInAnyOrder("edge", "pricing");
        assertThat(of(prod, HorizontalPodAutoscaler.class))
                .allSatisfy(h -> assertThat(h.getSpec().getMinReplicas()).isGreaterThanOrEqualTo(2));
    }

    private static List<Deployment> serviceDeployments(String dir) {
        return of(Manifests.render(dir), Deployment.class).stream()
                .filter(d -> !app(d).equals("client"))
                .toList();
    }

    private static <T> List<T> of(List<HasMetadata> objects, Class<T> type) {
        return objects.stream().filter(type::isInstance).map(type::cast).toList();
    }

    private static <T extends HasMetadata> T named(List<T> objects, String name) {
        return objects.stream()
                .filter(o -> o.getMetadata().getName().equals(name))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no object named " + name));
    }

    private static String app(Deployment deployment) {
        return deployment.getSpec().getTemplate().getMetadata().getLabels().get("app");
    }

    private static Container container(Deployment deployment) {
        return deployment.getSpec().getTemplate().getSpec().getContainers().get(0);
    }

    private static String env(Deployment deployment, String name) {
        return container(deployment).getEnv().stream()
                .filter(e -> e.getName().equals(name))
                .findFirst()
                .map(EnvVar::getValue)
                .orElseThrow(() -> new AssertionError(name + " not set"));
    }

    /** The containers of the Compose suite get the limits their pods get: memory and CPU, equal. */
    @Test
    @SuppressWarnings("unchecked")
    void composeLimitsAreThePodsLimits() {
        Map<String, Object> compose =
                new org.yaml.snakeyaml.Yaml().load(Manifests.read(Manifests.ROOT.resolve("docker-compose.yml")));
        Map<String, Map<String, Object>> services = (Map<String, Map<String, Object>>) compose.get("services");
        for (Deployment deployment : of(Manifests.render("base"), Deployment.class)) {
            Container container = container(deployment);
            String image = container.getImage();
            if (!image.startsWith("grpcops/") || image.startsWith("grpcops/cli")) {
                continue;
            }
            Map<String, io.fabric8.kubernetes.api.model.Quantity> limits =
                    container.getResources().getLimits();
            List<Map<String, Object>> replicas = services.values().stream()
                    .filter(service -> image.equals(service.get("image")))
                    .toList();
            assertThat(replicas).as("Compose runs " + image).isNotEmpty();
            for (Map<String, Object> service : replicas) {
                assertThat(bytes(String.valueOf(service.get("mem_limit"))))
                        .as(image + " mem_limit")
                        .isEqualTo(io.fabric8.kubernetes.api.model.Quantity.getAmountInBytes(limits.get("memory"))
                                .longValue());
                assertThat(Double.parseDouble(String.valueOf(service.get("cpus"))))
                        .as(image + " cpus")
                        .isEqualTo(io.fabric8.kubernetes.api.model.Quantity.getAmountInBytes(limits.get("cpu"))
                                .doubleValue());
            }
        }
    }

    /** Compose's memory notation: 512m is 512 MiB. */
    private static long bytes(String composeMemory) {
        Matcher m =
                Pattern.compile("(\\d+)([kmg]?)b?").matcher(composeMemory.trim().toLowerCase(java.util.Locale.ROOT));
        assertThat(m.matches()).as("a Compose memory size: " + composeMemory).isTrue();
        long amount = Long.parseLong(m.group(1));
        return switch (m.group(2)) {
            case "k" -> amount << 10;
            case "m" -> amount << 20;
            case "g" -> amount << 30;
            default -> amount;
        };
    }
}
