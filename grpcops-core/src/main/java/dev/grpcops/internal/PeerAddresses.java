package dev.grpcops.internal;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;

/** What the library calls a peer: its IP address, whatever its port. */
public final class PeerAddresses {

    private PeerAddresses() {}

    /** The IP address of {@code peer} (its host name if unresolved), {@code "unknown"} when there is none. */
    public static String ip(SocketAddress peer) {
        if (peer instanceof InetSocketAddress inet) {
            InetAddress address = inet.getAddress();
            return address != null ? address.getHostAddress() : inet.getHostString();
        }
        return peer == null ? "unknown" : peer.toString();
    }
}
