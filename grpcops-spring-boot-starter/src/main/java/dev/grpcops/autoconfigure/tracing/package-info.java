/**
 * Traces with the budget at every hop, exported over OTLP only when an endpoint is configured
 * ({@code management.otlp.tracing.endpoint} or the {@code OTEL_*} variables); {@link
 * dev.grpcops.autoconfigure.tracing.CallTags} adds attributes to the served call's span.
 */
package dev.grpcops.autoconfigure.tracing;
