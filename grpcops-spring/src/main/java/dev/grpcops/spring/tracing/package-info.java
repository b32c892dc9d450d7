/** The library's spans and log correlation on the application's OpenTelemetry, for either starter. */
package dev.grpcops.spring.tracing;
