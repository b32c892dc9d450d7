/** Admin authorization on Spring gRPC servers ({@code grpcops.admin.*}). */
package dev.grpcops.springgrpc.admin;
