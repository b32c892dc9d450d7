/**
 * Channels that spread calls over every replica and come back quickly:
 * {@link dev.grpcops.client.ServiceConfigs} (service configs for grpc-java channels) and
 * {@link dev.grpcops.client.ReconnectNudger} (skips gRPC's growing reconnect backoff while a channel
 * reaches no replica at all).
 */
package dev.grpcops.client;
