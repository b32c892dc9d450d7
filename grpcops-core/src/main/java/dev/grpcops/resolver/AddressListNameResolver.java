package dev.grpcops.resolver;

import io.grpc.EquivalentAddressGroup;
import io.grpc.NameResolver;
import io.grpc.Status;
import io.grpc.SynchronizationContext;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;

/**
 * The resolver behind {@code list:///a:p,b:p}. Host names are looked up on every resolution (start
 * and each {@link #refresh()}), off the caller's thread, so that a replica whose address changed
 * is found again; what goes wrong (a malformed target, an unknown host) reaches the channel
 * through the listener, and its calls fail {@code UNAVAILABLE} with that message.
 */
final class AddressListNameResolver extends NameResolver {

    /** The target as the channel was given it, for messages. */
    private final String target;
    /** The target's path: {@code /host:port,host:port,...} when well formed, else anything or null. */
    private final String path;

    private final String authority;
    private final Executor offload;
    private final SynchronizationContext syncContext;

    // Touched only in the synchronization context.
    private Listener2 listener;
    private boolean resolving;
    private boolean shutdown;

    AddressListNameResolver(URI target, Args args) {
        this(target.toString(), target.getAuthority(), target.getPath(), args);
    }

    /**
     * @param target the whole target, for messages
     * @param authority the target's authority, null or empty if none
     * @param path the target's path, null if none
     */
    AddressListNameResolver(String target, String authority, String path, Args args) {
        this.target = target;
        this.path = path;
        this.authority = authority(authority, path);
        this.offload = args.getOffloadExecutor() != null ? args.getOffloadExecutor() : AddressListNameResolver::thread;
        this.syncContext = args.getSynchronizationContext();
    }

    @Override
    public String getServiceAuthority() {
        return authority;
    }

    @Override
    public void start(Listener2 listener) {
        this.listener = listener;
        resolve();
    }

    @Override
    public void refresh() {
        resolve();
    }

    @Override
    public void shutdown() {
        shutdown = true;
    }

    private void resolve() {
        if (resolving || shutdown) {
            return;
        }
        resolving = true;
        offload.execute(() -> {
            Object result = lookUp();
            syncContext.execute(() -> {
                resolving = false;
                if (shutdown) {
                    return;
                }
                if (result instanceof Status error) {
                    listener.onError(error);
                } else {
                    @SuppressWarnings("unchecked")
                    List<EquivalentAddressGroup> groups = (List<EquivalentAddressGroup>) result;
                    listener.onResult2(
                            ResolutionResult.newBuilder().setAddresses(groups).build());
                }
            });
        });
    }

    /** The resolved addresses, or a Status saying why there are none. */
    private Object lookUp() {
        if (path == null || path.length() <= 1 || !path.startsWith("/")) {
            return Status.UNAVAILABLE.withDescription(
                    "target '" + target + "' names no addresses: expected list:///host:port,host:port,...");
        }
        List<EquivalentAddressGroup> groups = new ArrayList<>();
        for (String address : path.substring(1).split(",", -1)) {
            InetSocketAddress unresolved;
            try {
                unresolved = AddressListNameResolverProvider.socketAddress(address.trim());
            } catch (IllegalArgumentException e) {
                return Status.UNAVAILABLE.withDescription("target '" + target + "': " + e.getMessage());
            }
            try {
                for (InetAddress ip : InetAddress.getAllByName(unresolved.getHostString())) {
                    groups.add(new EquivalentAddressGroup(new InetSocketAddress(ip, unresolved.getPort())));
                }
            } catch (UnknownHostException e) {
                return Status.UNAVAILABLE
                        .withDescription("target '" + target + "': unknown host '" + unresolved.getHostString() + "'")
                        .withCause(e);
            }
        }
        return groups;
    }

    /** The target's authority if it names one, else its first address, as DNS targets do. */
    private static String authority(String authority, String path) {
        if (authority != null && !authority.isEmpty()) {
            return authority;
        }
        if (path != null && path.length() > 1) {
            String first = path.substring(1).split(",", -1)[0].trim();
            if (!first.isEmpty()) {
                return first;
            }
        }
        return AddressListNameResolverProvider.SCHEME;
    }

    private static void thread(Runnable lookUp) {
        Thread thread = new Thread(lookUp, "grpcops-list-resolver");
        thread.setDaemon(true);
        thread.start();
    }
}
