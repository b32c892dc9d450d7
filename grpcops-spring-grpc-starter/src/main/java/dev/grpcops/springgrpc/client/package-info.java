/** Spring gRPC channels: latency-aware balancing, readiness, cancellations and reconnects ({@code grpcops.client.*}). */
package dev.grpcops.springgrpc.client;
