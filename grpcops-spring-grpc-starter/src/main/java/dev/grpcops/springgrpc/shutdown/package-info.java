/** A Spring gRPC server's lifecycle: health names, SERVING after the warm-up, drain before stop ({@code grpcops.shutdown.*}). */
package dev.grpcops.springgrpc.shutdown;
