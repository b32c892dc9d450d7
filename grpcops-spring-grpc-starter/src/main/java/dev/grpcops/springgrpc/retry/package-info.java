/** Retries within the deadline budget, limited per target, on Spring gRPC channels ({@code grpcops.retry.*}). */
package dev.grpcops.springgrpc.retry;
