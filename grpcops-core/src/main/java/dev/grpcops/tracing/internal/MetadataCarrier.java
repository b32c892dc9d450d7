package dev.grpcops.tracing.internal;

import io.grpc.Metadata;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapSetter;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * gRPC metadata as a propagator's carrier. The keys of the propagator's own fields are made once;
 * any other name a propagator asks for (one that walks the carrier's keys) is made per call and
 * never kept, so a peer cannot grow the cache with header names of its own.
 */
final class MetadataCarrier implements TextMapGetter<Metadata>, TextMapSetter<Metadata> {

    private final Map<String, Metadata.Key<String>> keys = new ConcurrentHashMap<>();

    MetadataCarrier(Collection<String> fields) {
        for (String field : fields) {
            Metadata.Key<String> key = key(field);
            if (key != null) {
                keys.put(field, key);
            }
        }
    }

    @Override
    public Iterable<String> keys(Metadata carrier) {
        return carrier.keys();
    }

    @Override
    public String get(Metadata carrier, String name) {
        if (carrier == null || name == null) {
            return null;
        }
        Metadata.Key<String> key = keys.get(name);
        if (key == null) {
            key = key(name);
        }
        return key == null ? null : carrier.get(key);
    }

    @Override
    public void set(Metadata carrier, String name, String value) {
        if (carrier == null || name == null || value == null) {
            return;
        }
        Metadata.Key<String> key = keys.get(name);
        if (key == null) {
            key = key(name);
        }
        if (key != null) {
            carrier.discardAll(key);
            carrier.put(key, value);
        }
    }

    /** An ASCII key, or null for a name gRPC cannot carry as text (a {@code -bin} name, a malformed one). */
    private static Metadata.Key<String> key(String name) {
        if (name.endsWith(Metadata.BINARY_HEADER_SUFFIX)) {
            return null;
        }
        try {
            return Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER);
        } catch (IllegalArgumentException malformed) {
            return null;
        }
    }
}
