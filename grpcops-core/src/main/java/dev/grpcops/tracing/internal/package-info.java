/** The interceptors behind {@link dev.grpcops.tracing.GrpcTracing}. Not API. */
package dev.grpcops.tracing.internal;
