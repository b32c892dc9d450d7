package dev.grpcops.kubernetes;

import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.fabric8.kubernetes.client.http.WebSocketHandshakeException;
import io.fabric8.kubernetes.client.http.WebSocketUpgradeResponse;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows one resolver's requests to the API server (an interceptor on its own client), because
 * the informer re-watches after a lost connection on its own, silently: every failed attempt is
 * counted, an outage is logged once when it starts and once when it ends, never per retry.
 */
final class ApiConnection implements Interceptor {

    private static final Logger log = LoggerFactory.getLogger(KubernetesNameResolver.class);

    private final KubernetesTarget target;
    private final ResolverListener listener;
    private final AtomicBoolean down = new AtomicBoolean();
    private final AtomicInteger failures = new AtomicInteger();
    private volatile long downSince;
    /** How many endpoints the channel has, for the outage's log line. */
    private volatile int endpoints;

    ApiConnection(KubernetesTarget target, ResolverListener listener) {
        this.target = target;
        this.listener = listener;
    }

    void endpoints(int endpoints) {
        this.endpoints = endpoints;
    }

    @Override
    public void afterConnectionFailure(HttpRequest request, Throwable failure) {
        if (failure instanceof WebSocketHandshakeException refused && fallsBackToHttp(refused.getResponse())) {
            return;
        }
        failed(failure);
    }

    @Override
    public void after(HttpRequest request, HttpResponse<?> response, AsyncBody.Consumer<List<ByteBuffer>> consumer) {
        if (fallsBackToHttp(response)) {
            return;
        }
        int code = response.code();
        if ((code >= 200 && code < 300) || code == 101) {
            reached();
        } else if (code >= 400) {
            failed(new KubernetesClientException(
                    "HTTP " + code + " from " + request.method() + " " + request.uri(), code, null));
        }
    }

    /**
     * A WebSocket upgrade a proxy refused with 200 or 503: fabric8 then watches over plain HTTP
     * (its {@code BaseOperation} falls back on exactly these codes), so the watch is not failing and
     * the fallback request's own answer says whether the API is reached.
     */
    private static boolean fallsBackToHttp(HttpResponse<?> response) {
        return response instanceof WebSocketUpgradeResponse && (response.code() == 200 || response.code() == 503);
    }

    private void failed(Throwable cause) {
        listener.watchError(target.text(), cause);
        failures.incrementAndGet();
        if (down.compareAndSet(false, true)) {
            downSince = System.nanoTime();
            log.warn(
                    "{}: the Kubernetes API failed ({}); the channel keeps its {} last known endpoint(s),"
                            + " the watch retries with backoff (logged again when it is back)",
                    target.text(),
                    describe(target, cause),
                    endpoints);
        }
    }

    private void reached() {
        if (down.compareAndSet(true, false)) {
            log.info(
                    "{}: the Kubernetes API answers again after {} ms and {} failed attempt(s)",
                    target.text(),
                    (System.nanoTime() - downSince) / 1_000_000,
                    failures.getAndSet(0));
        } else {
            failures.set(0);
        }
    }

    /** What went wrong, in words an operator can act on: the missing permission, the unreachable server. */
    static String describe(KubernetesTarget target, Throwable cause) {
        Throwable t = cause;
        while (t != null && !(t instanceof KubernetesClientException) && t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        if (t instanceof KubernetesClientException k8s) {
            if (k8s.getCode() == 403) {
                return "forbidden: the pod's service account needs get/list/watch on endpointslices.discovery.k8s.io"
                        + " in namespace '" + target.namespace()
                        + "' (a Role and RoleBinding; see the grpcops-kubernetes README)";
            }
            if (k8s.getCode() == 401) {
                return "unauthorized: no valid service account token (automountServiceAccountToken: true?)";
            }
            if (k8s.getCode() > 0) {
                return "HTTP " + k8s.getCode() + ": " + k8s.getMessage();
            }
        }
        Throwable root = cause;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return "cannot reach the API server: " + root.getClass().getSimpleName()
                + (root.getMessage() != null ? " " + root.getMessage() : "");
    }
}
