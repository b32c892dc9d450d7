/** Server limits on Spring gRPC servers ({@code grpcops.server.*}). */
package dev.grpcops.springgrpc.server;
