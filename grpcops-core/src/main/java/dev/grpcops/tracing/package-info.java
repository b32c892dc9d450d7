/**
 * Traces of gRPC calls on OpenTelemetry: {@link dev.grpcops.tracing.GrpcTracing} makes a span per
 * served call and per downstream attempt, carries the trace context on the calls' metadata with the
 * application's propagators (W3C {@code traceparent} by default), and writes the deadline budget and
 * admission onto the spans; {@link dev.grpcops.tracing.CallTags} adds to the span of the call being
 * served. Needs {@code io.opentelemetry:opentelemetry-api} and an SDK the application configures.
 */
package dev.grpcops.tracing;
