package dev.grpcops.kubernetes;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import io.grpc.Status;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.util.Collection;
import java.util.List;
import java.util.function.Supplier;

/**
 * Resolves {@code kubernetes:///<service>[.<namespace>]:<port number or name>} by watching the
 * Service's EndpointSlices ({@code discovery.k8s.io/v1}, label {@code kubernetes.io/service-name})
 * through the API server of the pod's service account: new pods get calls the moment they are
 * ready, not at the next reconnect as with {@code dns:///}. Without a namespace, the pod's own.
 * The pod needs get/list/watch on {@code endpointslices.discovery.k8s.io} in that namespace.
 *
 * <p>Registered with gRPC's default registry (META-INF/services), so any channel takes such a
 * target, net.devh's {@code grpc.client.NAME.address} included. Its priority (4) is below DNS's,
 * so a target without a scheme is always DNS's. The Kubernetes client is configured only when a
 * channel first uses such a target; each resolver has its own (and its own watch).
 */
public final class KubernetesNameResolverProvider extends NameResolverProvider {

    public static final String SCHEME = "kubernetes";
    /** The resource the resolver watches, as RBAC names it (resource.group). */
    public static final String WATCHED_RESOURCE = "endpointslices.discovery.k8s.io";
    /** The verbs it needs on {@link #WATCHED_RESOURCE}. */
    public static final List<String> VERBS = List.of("get", "list", "watch");
    /** DNS's is 5: a target without a scheme must never come here. */
    static final int SERVICE_LOADER_PRIORITY = 4;
    /**
     * A provider made with a listener outranks the ServiceLoader one for this scheme, and ties with
     * DNS, which stays the default scheme: the registry keeps the first of equal priority.
     */
    static final int CONFIGURED_PRIORITY = 5;

    private final Supplier<Config> config;
    private final ResolverListener listener;
    private final int priority;
    private volatile Config resolved;

    /** The one ServiceLoader makes: the client configured as fabric8 finds it (in a pod: its service account). */
    public KubernetesNameResolverProvider() {
        this(() -> Config.autoConfigure(null), ResolverListener.NONE, SERVICE_LOADER_PRIORITY);
    }

    /**
     * For registering in place of the ServiceLoader one, with metrics:
     * {@code NameResolverRegistry.getDefaultRegistry().register(new KubernetesNameResolverProvider(...))}.
     *
     * @param config the client configuration, asked for when a channel first uses a kubernetes target
     */
    public KubernetesNameResolverProvider(Supplier<Config> config, ResolverListener listener) {
        this(config, listener, CONFIGURED_PRIORITY);
    }

    KubernetesNameResolverProvider(Supplier<Config> config, ResolverListener listener, int priority) {
        this.config = config;
        this.listener = listener;
        this.priority = priority;
    }

    @Override
    public NameResolver newNameResolver(URI target, NameResolver.Args args) {
        if (!SCHEME.equals(target.getScheme())) {
            return null;
        }
        return resolver(target.toString(), target.getAuthority(), target.getPath(), args);
    }

    /**
     * The form channels use on grpc-java 1.85 (RFC 3986 targets): some targets that parse, a bare
     * {@code kubernetes:} among them, are refused by {@link URI}, which the inherited version
     * converts to: that would throw from the channel's construction instead of failing its calls.
     */
    @Override
    public NameResolver newNameResolver(io.grpc.Uri target, NameResolver.Args args) {
        if (!SCHEME.equals(target.getScheme())) {
            return null;
        }
        return resolver(target.toString(), target.getAuthority(), target.getPath(), args);
    }

    private NameResolver resolver(String text, String authority, String path, NameResolver.Args args) {
        KubernetesTarget target;
        try {
            target = KubernetesTarget.parse(
                    text,
                    authority,
                    path,
                    () -> PodNamespace.of(PodNamespace.SERVICE_ACCOUNT_NAMESPACE, config().getNamespace()));
        } catch (IllegalArgumentException e) {
            return new KubernetesNameResolver(
                    text, null, Status.UNAVAILABLE.withDescription(e.getMessage()), args, this::client, listener);
        } catch (RuntimeException e) {
            return new KubernetesNameResolver(
                    text,
                    null,
                    Status.UNAVAILABLE
                            .withDescription(
                                    "target '" + text + "': no Kubernetes client configuration: " + e.getMessage())
                            .withCause(e),
                    args,
                    this::client,
                    listener);
        }
        return new KubernetesNameResolver(text, target, null, args, this::client, listener);
    }

    /**
     * A client of its own per resolver: the interceptor follows that resolver's requests. The JDK's
     * HTTP client whatever else is on the classpath. One quick retry per request, not fabric8's ten
     * (about 100 s in all): the informer's own backoff is the one that counts, a first list that
     * fails reaches the channel at once, and fabric8 shows the interceptor only failures it retries.
     */
    private KubernetesClient client(Interceptor interceptor) {
        Config base = config();
        Config own = new ConfigBuilder(base).withRequestRetryBackoffLimit(1).build();
        return new KubernetesClientBuilder()
                .withConfig(own)
                .withHttpClientFactory(new JdkHttpClientFactory())
                .withHttpClientBuilderConsumer(
                        builder -> builder.addOrReplaceInterceptor("grpcops-api-connection", interceptor))
                .build();
    }

    private Config config() {
        Config config = resolved;
        if (config == null) {
            synchronized (this) {
                if (resolved == null) {
                    resolved = this.config.get();
                }
                config = resolved;
            }
        }
        return config;
    }

    @Override
    public String getDefaultScheme() {
        return SCHEME;
    }

    @Override
    protected boolean isAvailable() {
        return true;
    }

    @Override
    protected int priority() {
        return priority;
    }

    @Override
    public Collection<Class<? extends SocketAddress>> getProducedSocketAddressTypes() {
        return List.of(InetSocketAddress.class);
    }
}
