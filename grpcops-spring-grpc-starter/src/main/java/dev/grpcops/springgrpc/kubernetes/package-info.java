/** The {@code kubernetes:///} resolver on Spring gRPC channels, when a service brings {@code grpcops-kubernetes} ({@code grpcops.kubernetes.*}). */
package dev.grpcops.springgrpc.kubernetes;
