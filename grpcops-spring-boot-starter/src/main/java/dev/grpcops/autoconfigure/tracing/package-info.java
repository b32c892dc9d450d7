/**
 * Traces with the budget at every hop, on Spring Boot's OpenTelemetry SDK, exported over OTLP only
 * when an endpoint is configured ({@code management.otlp.tracing.endpoint} or the {@code OTEL_*}
 * variables); the trace id in every log line written while serving. {@link
 * dev.grpcops.tracing.CallTags} adds attributes to the served call's span.
 */
package dev.grpcops.autoconfigure.tracing;
