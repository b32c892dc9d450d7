package dev.grpcops.server;

import io.grpc.MethodDescriptor;
import java.io.InputStream;

/** Messages as the transport hands them over, unparsed: parsed later, or never. */
enum RawMessages implements MethodDescriptor.Marshaller<InputStream> {
    INSTANCE;

    @Override
    public InputStream stream(InputStream value) {
        return value;
    }

    @Override
    public InputStream parse(InputStream stream) {
        // Whoever takes the stream reads it at once, before the transport releases it.
        return stream;
    }
}
