package dev.grpcops.kubernetes;

import dev.grpcops.kubernetes.ReadyEndpoints.Resolution;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.grpc.NameResolver;
import io.grpc.Status;
import io.grpc.SynchronizationContext;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The resolver behind {@code kubernetes:///service.namespace:port}: an informer (list, then watch;
 * no polling) on the Service's EndpointSlices hands the channel its ready endpoints the moment they
 * change, so that a new pod gets calls at once instead of at the next reconnect.
 *
 * <p>What goes wrong reaches the channel through the listener, and its calls fail
 * {@code UNAVAILABLE} with that message: a malformed target, a Service that does not exist, a
 * missing permission. Once the channel has endpoints, losing the API server does not take them
 * away: the informer re-watches with backoff and the last known endpoints stay.
 */
final class KubernetesNameResolver extends NameResolver {

    /** The label the EndpointSlice controller puts on every slice of a Service. */
    static final String SERVICE_NAME_LABEL = "kubernetes.io/service-name";

    private static final Logger log = LoggerFactory.getLogger(KubernetesNameResolver.class);

    private final String text;
    /** Null when the target is malformed; {@link #targetError} says why. */
    private final KubernetesTarget target;

    private final Status targetError;
    private final Function<Interceptor, KubernetesClient> clients;
    private final ResolverListener metrics;
    private final Executor offload;
    private final SynchronizationContext syncContext;

    // Touched only in the synchronization context.
    private Listener2 listener;
    private Resolution delivered;
    private boolean hadAddresses;
    /** Written in the synchronization context; read by the offload thread too. */
    private volatile boolean shutdown;

    private final AtomicBoolean stopped = new AtomicBoolean();

    // Set by watch() and cleared by stopWatching(), both synchronized; read by publish().
    private volatile KubernetesClient client;
    private volatile SharedIndexInformer<EndpointSlice> informer;
    private volatile ApiConnection connection;

    KubernetesNameResolver(
            String text,
            KubernetesTarget target,
            Status targetError,
            Args args,
            Function<Interceptor, KubernetesClient> clients,
            ResolverListener metrics) {
        this.text = text;
        this.target = target;
        this.targetError = targetError;
        this.clients = clients;
        this.metrics = metrics;
        this.offload = args.getOffloadExecutor() != null ? args.getOffloadExecutor() : KubernetesNameResolver::thread;
        this.syncContext = args.getSynchronizationContext();
    }

    @Override
    public String getServiceAuthority() {
        return target != null ? target.authority() : KubernetesNameResolverProvider.SCHEME;
    }

    @Override
    public void start(Listener2 listener) {
        this.listener = listener;
        if (target == null) {
            listener.onError(targetError);
            return;
        }
        offload.execute(this::watch);
    }

    /** Nothing to do: the watch delivers every change as it happens. */
    @Override
    public void refresh() {}

    @Override
    public void shutdown() {
        if (shutdown) {
            return;
        }
        shutdown = true;
        if (target != null) {
            offload.execute(this::stopWatching);
        }
    }

    private synchronized void watch() {
        if (shutdown) {
            return;
        }
        try {
            connection = new ApiConnection(target, metrics);
            client = clients.apply(connection);
            SharedIndexInformer<EndpointSlice> informer = client.discovery()
                    .v1()
                    .endpointSlices()
                    .inNamespace(target.namespace())
                    .withLabel(SERVICE_NAME_LABEL, target.service())
                    .runnableInformer(0);
            // By default an informer whose first list fails gives up; this one keeps trying with
            // backoff, so that a permission or a Service added later is picked up.
            informer.exceptionHandler((started, cause) -> {
                apiFailed(Status.UNAVAILABLE
                        .withDescription("target '" + text + "': " + ApiConnection.describe(target, cause))
                        .withCause(cause));
                return true;
            });
            informer.addEventHandler(new ResourceEventHandler<>() {
                @Override
                public void onAdd(EndpointSlice slice) {
                    publish();
                }

                @Override
                public void onUpdate(EndpointSlice old, EndpointSlice slice) {
                    publish();
                }

                @Override
                public void onDelete(EndpointSlice slice, boolean finalStateUnknown) {
                    publish();
                }

                @Override
                public void onNothing() {
                    publish();
                }
            });
            this.informer = informer;
            informer.start().whenComplete((ignored, failure) -> {
                if (failure == null) {
                    publish();
                }
            });
            if (shutdown) {
                stopWatching();
            }
        } catch (RuntimeException e) {
            // Client configuration that cannot work (no API server address, unreadable certificates).
            log.warn("{}: cannot watch EndpointSlices", text, e);
            apiFailed(Status.UNAVAILABLE
                    .withDescription("target '" + text + "': cannot watch EndpointSlices: " + e.getMessage())
                    .withCause(e));
        }
    }

    /** The Service's endpoints as the informer holds them now; nothing before the first full list. */
    private void publish() {
        SharedIndexInformer<EndpointSlice> informer = this.informer;
        if (informer == null || !informer.hasSynced()) {
            return;
        }
        List<EndpointSlice> slices = informer.getStore().list();
        deliver(ReadyEndpoints.of(target, slices));
    }

    /**
     * The API server could not be asked. Before the channel has had endpoints its calls fail with
     * why; after, it keeps the last known ones (the watch catches up when the server is back).
     */
    private void apiFailed(Status error) {
        syncContext.execute(() -> {
            if (!hadAddresses) {
                deliverNow(Resolution.failed(error));
            }
        });
    }

    private void deliver(Resolution resolution) {
        syncContext.execute(() -> deliverNow(resolution));
    }

    private void deliverNow(Resolution resolution) {
        if (shutdown || resolution.equals(delivered)) {
            return;
        }
        delivered = resolution;
        if (resolution.addresses() != null) {
            hadAddresses = true;
            connection.endpoints(resolution.addresses().size());
            metrics.endpoints(text, resolution.addresses().size());
            listener.onResult2(ResolutionResult.newBuilder()
                    .setAddresses(resolution.addresses())
                    .build());
        } else {
            metrics.endpoints(text, 0);
            listener.onError(resolution.error());
        }
    }

    /** Runs after {@link #watch()} or instead of it (synchronized), once the resolver is shut down. */
    private synchronized void stopWatching() {
        if (informer != null) {
            informer.close();
            informer = null;
        }
        if (client != null) {
            client.close();
            client = null;
        }
        if (stopped.compareAndSet(false, true)) {
            metrics.closed(text);
        }
    }

    private static void thread(Runnable task) {
        Thread thread = new Thread(task, "grpcops-kubernetes-resolver");
        thread.setDaemon(true);
        thread.start();
    }
}
