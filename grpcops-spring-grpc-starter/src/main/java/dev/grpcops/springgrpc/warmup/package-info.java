/** The warm-up before SERVING on Spring gRPC servers ({@code grpcops.warmup.*}). */
package dev.grpcops.springgrpc.warmup;
