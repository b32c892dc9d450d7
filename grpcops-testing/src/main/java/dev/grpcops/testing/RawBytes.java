package dev.grpcops.testing;

import io.grpc.MethodDescriptor;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * Messages as they are on the wire: a method descriptor with this marshaller on both sides sends
 * any bytes a test writes (a truncated or malformed request, a field the server's schema does not
 * know) and hands back the bytes the server answered, unparsed.
 *
 * <pre>{@code
 * MethodDescriptor<byte[], byte[]> rawCheck = RawBytes.of(StockGrpc.getCheckMethod());
 * }</pre>
 */
public enum RawBytes implements MethodDescriptor.Marshaller<byte[]> {
    INSTANCE;

    /** {@code method} with its requests and responses as bytes: same name, same type. */
    public static MethodDescriptor<byte[], byte[]> of(MethodDescriptor<?, ?> method) {
        return method.toBuilder(INSTANCE, INSTANCE).build();
    }

    /** A unary method named {@code fullMethodName} ({@code "package.Service/Method"}), whatever the server serves. */
    public static MethodDescriptor<byte[], byte[]> unary(String fullMethodName) {
        return MethodDescriptor.<byte[], byte[]>newBuilder()
                .setType(MethodDescriptor.MethodType.UNARY)
                .setFullMethodName(fullMethodName)
                .setRequestMarshaller(INSTANCE)
                .setResponseMarshaller(INSTANCE)
                .build();
    }

    @Override
    public InputStream stream(byte[] value) {
        return new ByteArrayInputStream(value);
    }

    @Override
    public byte[] parse(InputStream stream) {
        try (stream) {
            return stream.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
