package dev.grpcops.kubernetes;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.Dispatcher;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.HashMap;

/**
 * fabric8's mock API server in CRUD mode on 127.0.0.1, which can be stopped and started again on
 * the same port with the same objects (the dispatcher holds them), as an API server restart would.
 */
final class MockApi implements AutoCloseable {

    static final String NAMESPACE = "grpcops";

    private final Dispatcher dispatcher;
    private KubernetesMockServer server;
    private int port;
    private final KubernetesClient admin;

    private MockApi(Dispatcher dispatcher) {
        this.dispatcher = dispatcher;
        start();
        this.admin = new KubernetesClientBuilder().withConfig(config()).build();
    }

    static MockApi crud() {
        return new MockApi(new KubernetesCrudDispatcher());
    }

    /** A server that answers every request with {@code dispatcher} (e.g. 403 for all). */
    static MockApi answering(Dispatcher dispatcher) {
        return new MockApi(dispatcher);
    }

    /** The test's own client, to create and change objects as controllers would. */
    KubernetesClient admin() {
        return admin;
    }

    /** What the resolver is given: this server, plain HTTP, a quick first reconnect. */
    Config config() {
        return new ConfigBuilder(Config.empty())
                .withMasterUrl("http://127.0.0.1:" + port)
                .withNamespace(NAMESPACE)
                .withWatchReconnectInterval(200)
                .withConnectionTimeout(2000)
                .withRequestTimeout(5000)
                .build();
    }

    synchronized void stop() {
        server.destroy();
    }

    /** Started again on the same port, with the same objects. */
    synchronized void start() {
        server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), dispatcher, false);
        try {
            server.init(InetAddress.getByName("127.0.0.1"), port);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
        port = server.getPort();
    }

    @Override
    public void close() {
        admin.close();
        server.destroy();
    }
}
