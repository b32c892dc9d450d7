package dev.grpcops.resolver;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.awaitility.Awaitility.await;

import dev.grpcops.proto.whoami.v1.WhoAmIGrpc;
import dev.grpcops.proto.whoami.v1.WhoReply;
import dev.grpcops.proto.whoami.v1.WhoRequest;
import io.grpc.EquivalentAddressGroup;
import io.grpc.Grpc;
import io.grpc.InsecureServerCredentials;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.NameResolver;
import io.grpc.NameResolverProvider;
import io.grpc.NameResolverRegistry;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.SynchronizationContext;
import io.grpc.internal.DnsNameResolverProvider;
import io.grpc.stub.StreamObserver;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

@Timeout(30)
class AddressListNameResolverTests {

    private final AddressListNameResolverProvider provider = new AddressListNameResolverProvider();
    /** What escaped a task run in the synchronization context: nothing may. */
    private final List<Throwable> uncaught = new CopyOnWriteArrayList<>();

    private final SynchronizationContext syncContext = new SynchronizationContext((thread, e) -> uncaught.add(e));
    /** Lookups handed to the offload executor; they run only when a test runs them, on {@link #lookupThread}. */
    private final BlockingQueue<Runnable> offloaded = new LinkedBlockingQueue<>();

    private final ExecutorService lookupThread = Executors.newSingleThreadExecutor(r -> new Thread(r, "test-lookup"));
    private final List<NameResolver> resolvers = new ArrayList<>();
    private final List<Server> servers = new ArrayList<>();
    private final List<ManagedChannel> channels = new ArrayList<>();

    @AfterEach
    void stop() throws InterruptedException {
        syncContext.execute(() -> resolvers.forEach(NameResolver::shutdown));
        for (ManagedChannel channel : channels) {
            channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        for (Server server : servers) {
            server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        lookupThread.shutdownNow();
        assertThat(uncaught)
                .as("exceptions thrown in the synchronization context")
                .isEmpty();
    }

    // --- choosing the resolver ---------------------------------------------------------------

    @Test
    void targetWithoutSchemeGoesToDnsWhateverTheClasspathOrder() {
        NameResolverProvider dns = new DnsNameResolverProvider();
        for (List<NameResolverProvider> classpathOrder : List.of(List.of(provider, dns), List.of(dns, provider))) {
            NameResolverRegistry registry = new NameResolverRegistry();
            classpathOrder.forEach(registry::register);

            assertThat(registry.getDefaultScheme())
                    .as("default scheme when registered as %s", classpathOrder)
                    .isEqualTo("dns");
            assertThat(registry.getProviderForScheme("list")).isSameAs(provider);
        }
    }

    @Test
    void isRegisteredWithGrpcsDefaultRegistryWithoutTakingOverTargetsWithoutScheme() {
        NameResolverRegistry registry = NameResolverRegistry.getDefaultRegistry();

        assertThat(registry.getProviderForScheme("list")).isInstanceOf(AddressListNameResolverProvider.class);
        assertThat(registry.getDefaultScheme()).isEqualTo("dns");
    }

    // --- authority ---------------------------------------------------------------------------

    @Test
    void authorityIsTheTargetsAuthority() {
        assertThat(resolver("list://pricing.prod:9090/10.0.0.7:8080,10.0.0.8:8080")
                        .getServiceAuthority())
                .isEqualTo("pricing.prod:9090");
    }

    @Test
    void authorityWithoutOneInTheTargetIsTheFirstAddressAsForDns() {
        NameResolver dns =
                new DnsNameResolverProvider().newNameResolver(URI.create("dns:///pricing-0.prod:8080"), args());
        try {
            assertThat(resolver("list:///pricing-0.prod:8080,pricing-1.prod:8080")
                            .getServiceAuthority())
                    .isEqualTo("pricing-0.prod:8080")
                    .isEqualTo(dns.getServiceAuthority());
            assertThat(resolver("list:///10.0.0.7:8080").getServiceAuthority()).isEqualTo("10.0.0.7:8080");
        } finally {
            dns.shutdown();
        }
    }

    // --- when and where names are looked up ---------------------------------------------------

    @Test
    void namesAreLookedUpOnTheOffloadExecutorNotTheThreadCallingStart() throws Exception {
        NameResolver resolver = resolver("list:///127.0.0.1:7001,localhost:7002");
        RecordingListener listener = new RecordingListener();

        syncContext.execute(() -> resolver.start(listener));

        assertThat(listener.events)
                .as("nothing is delivered from start() itself")
                .isEmpty();
        assertThat(offloaded)
                .as("start() hands one lookup to the offload executor")
                .hasSize(1);

        runOffloadedLookups();
        Event result = listener.next();
        assertThat(result.error()).isNull();
        assertThat(result.thread().getName())
                .as("delivered where the lookup ran")
                .isEqualTo("test-lookup");
        assertThat(result.inSyncContext())
                .as("delivered in the synchronization context")
                .isTrue();
        assertThat(addresses(result))
                .allSatisfy(address -> assertThat(address.isUnresolved()).isFalse());
        assertThat(addresses(result))
                .extracting(InetSocketAddress::getPort)
                .startsWith(7001)
                .contains(7002);
        assertThat(addresses(result).get(0).getAddress().getHostAddress()).isEqualTo("127.0.0.1");
    }

    @Test
    void resultOfALookupWaitsForTheSynchronizationContext() throws Exception {
        NameResolver resolver = resolver("list:///127.0.0.1:7001");
        RecordingListener listener = new RecordingListener();
        List<Integer> deliveredWhileBusy = new ArrayList<>();

        syncContext.execute(() -> {
            resolver.start(listener);
            try {
                // The lookup finishes on another thread while this task still holds the context.
                lookupThread.submit(offloaded.remove()).get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
            deliveredWhileBusy.add(listener.events.size());
        });

        assertThat(deliveredWhileBusy).containsExactly(0);
        Event result = listener.next();
        assertThat(result.inSyncContext()).isTrue();
        assertThat(addresses(result)).containsExactly(new InetSocketAddress("127.0.0.1", 7001));
    }

    @Test
    void refreshLooksTheNamesUpAgain() throws Exception {
        NameResolver resolver = resolver("list:///127.0.0.1:7001,localhost:7002");
        RecordingListener listener = new RecordingListener();
        syncContext.execute(() -> resolver.start(listener));
        runOffloadedLookups();
        assertThat(listener.next().error()).isNull();

        syncContext.execute(resolver::refresh);

        assertThat(offloaded)
                .as("refresh() hands a new lookup to the offload executor")
                .hasSize(1);
        assertThat(listener.events).isEmpty();
        runOffloadedLookups();
        Event again = listener.next();
        assertThat(again.error()).isNull();
        assertThat(again.inSyncContext()).isTrue();
        assertThat(addresses(again))
                .extracting(InetSocketAddress::getPort)
                .startsWith(7001)
                .contains(7002);
    }

    @Test
    void refreshWhileALookupIsUnderWayStartsNoOther() throws Exception {
        NameResolver resolver = resolver("list:///127.0.0.1:7001");
        RecordingListener listener = new RecordingListener();

        syncContext.execute(() -> {
            resolver.start(listener);
            resolver.refresh();
            resolver.refresh();
        });

        assertThat(offloaded).hasSize(1);
        runOffloadedLookups();
        assertThat(listener.next().error()).isNull();
        assertThat(listener.events).isEmpty();
    }

    @Test
    void lookupFinishingAfterShutdownDeliversNothing() throws Exception {
        NameResolver resolver = resolver("list:///127.0.0.1:7001");
        RecordingListener listener = new RecordingListener();
        syncContext.execute(() -> resolver.start(listener));

        syncContext.execute(resolver::shutdown);
        runOffloadedLookups();

        assertThat(listener.events).isEmpty();
        syncContext.execute(resolver::refresh);
        assertThat(offloaded).as("no lookup after shutdown").isEmpty();
    }

    // --- failures go to the listener, not to whoever built the channel ------------------------

    @ParameterizedTest
    @ValueSource(
            strings = {
                "list:foo",
                "list:///",
                "list:///127.0.0.1:7001,b",
                "list:///127.0.0.1:0",
                "list:///127.0.0.1:7001,,127.0.0.1:7002"
            })
    void malformedTargetIsReportedToTheListenerNamingTheTarget(String target) throws Exception {
        NameResolver resolver = resolver(target);
        RecordingListener listener = new RecordingListener();

        syncContext.execute(() -> resolver.start(listener));
        runOffloadedLookups();

        Event failed = listener.next();
        assertThat(failed.error()).as("onError for %s", target).isNotNull();
        assertThat(failed.error().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(failed.error().getDescription()).contains(target);
        assertThat(failed.inSyncContext()).isTrue();
    }

    @Test
    void unknownHostIsReportedToTheListenerNamingTheHost() throws Exception {
        String target = "list:///127.0.0.1:7001,no-such-host.invalid:7002";
        NameResolver resolver = resolver(target);
        RecordingListener listener = new RecordingListener();

        syncContext.execute(() -> resolver.start(listener));
        runOffloadedLookups();

        Event failed = listener.next();
        assertThat(failed.error()).as("onError, not unresolved addresses").isNotNull();
        assertThat(failed.error().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(failed.error().getDescription()).contains(target).contains("no-such-host.invalid");
    }

    // --- end to end, on real channels --------------------------------------------------------

    @Test
    void channelToAListOfAddressesReachesEveryBackend() throws Exception {
        Server a = startServer("a");
        Server b = startServer("b");
        String target = "list:///127.0.0.1:" + a.getPort() + ",localhost:" + b.getPort();
        ManagedChannel channel = channel(
                ManagedChannelBuilder.forTarget(target).usePlaintext().defaultLoadBalancingPolicy("round_robin"));
        WhoAmIGrpc.WhoAmIBlockingStub stub = WhoAmIGrpc.newBlockingStub(channel);

        Set<String> answered = ConcurrentHashMap.newKeySet();
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            answered.add(stub.withDeadlineAfter(5, TimeUnit.SECONDS)
                    .who(WhoRequest.getDefaultInstance())
                    .getPod());
            assertThat(answered).containsExactlyInAnyOrder("a", "b");
        });
        assertThat(channel.authority()).isEqualTo("127.0.0.1:" + a.getPort());
    }

    @ParameterizedTest
    @ValueSource(
            strings = {"list:", "list:foo", "list:///", "list:///127.0.0.1:7001,b", "list:///no-such-host.invalid:7001"
            })
    void callOnAChannelWithABadTargetFailsUnavailableNamingTheTarget(String target) {
        // Building the channel must not throw: the target's trouble belongs to its calls.
        ManagedChannel channel = channel(ManagedChannelBuilder.forTarget(target).usePlaintext());

        StatusRuntimeException failed = catchThrowableOfType(
                StatusRuntimeException.class,
                () -> WhoAmIGrpc.newBlockingStub(channel)
                        .withDeadlineAfter(20, TimeUnit.SECONDS)
                        .who(WhoRequest.getDefaultInstance()));

        assertThat(failed).as("the call fails").isNotNull();
        assertThat(failed.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(failed.getStatus().getDescription()).contains(target);
    }

    // --- helpers -----------------------------------------------------------------------------

    private NameResolver resolver(String target) {
        NameResolver resolver = provider.newNameResolver(URI.create(target), args());
        assertThat(resolver).as("resolver for %s", target).isNotNull();
        resolvers.add(resolver);
        return resolver;
    }

    /** As grpc-java's own DnsNameResolverTest builds them, with an offload executor the test drives. */
    private NameResolver.Args args() {
        return NameResolver.Args.newBuilder()
                .setDefaultPort(443)
                .setProxyDetector(address -> null)
                .setSynchronizationContext(syncContext)
                .setServiceConfigParser(new NameResolver.ServiceConfigParser() {
                    @Override
                    public NameResolver.ConfigOrError parseServiceConfig(Map<String, ?> rawServiceConfig) {
                        return NameResolver.ConfigOrError.fromConfig(rawServiceConfig);
                    }
                })
                .setOffloadExecutor(offloaded::add)
                .build();
    }

    /** Runs the lookups handed to the offload executor so far on {@link #lookupThread}, and waits for them. */
    private void runOffloadedLookups() throws Exception {
        Runnable lookUp;
        while ((lookUp = offloaded.poll()) != null) {
            lookupThread.submit(lookUp).get(20, TimeUnit.SECONDS);
        }
    }

    private static List<InetSocketAddress> addresses(Event result) {
        List<InetSocketAddress> addresses = new ArrayList<>();
        for (EquivalentAddressGroup group : result.addresses()) {
            for (SocketAddress address : group.getAddresses()) {
                addresses.add((InetSocketAddress) address);
            }
        }
        return addresses;
    }

    private Server startServer(String pod) throws Exception {
        Server server = Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create())
                .addService(new WhoAmIGrpc.WhoAmIImplBase() {
                    @Override
                    public void who(WhoRequest request, StreamObserver<WhoReply> responses) {
                        responses.onNext(WhoReply.newBuilder().setPod(pod).build());
                        responses.onCompleted();
                    }
                })
                .build()
                .start();
        servers.add(server);
        return server;
    }

    private ManagedChannel channel(ManagedChannelBuilder<?> builder) {
        ManagedChannel channel = builder.build();
        channels.add(channel);
        return channel;
    }

    /** One call of the listener: addresses or an error, where it ran. */
    private record Event(List<EquivalentAddressGroup> addresses, Status error, Thread thread, boolean inSyncContext) {}

    private final class RecordingListener extends NameResolver.Listener2 {

        final BlockingQueue<Event> events = new LinkedBlockingQueue<>();

        @Override
        public void onResult(NameResolver.ResolutionResult result) {
            events.add(
                    new Event(result.getAddressesOrError().getValue(), null, Thread.currentThread(), inSyncContext()));
        }

        @Override
        public Status onResult2(NameResolver.ResolutionResult result) {
            onResult(result);
            return Status.OK;
        }

        @Override
        public void onError(Status error) {
            events.add(new Event(List.of(), error, Thread.currentThread(), inSyncContext()));
        }

        Event next() throws InterruptedException {
            Event event = events.poll(20, TimeUnit.SECONDS);
            assertThat(event).as("the listener was called").isNotNull();
            return event;
        }

        private boolean inSyncContext() {
            try {
                syncContext.throwIfNotInThisSynchronizationContext();
                return true;
            } catch (IllegalStateException e) {
                return false;
            }
        }
    }
}
