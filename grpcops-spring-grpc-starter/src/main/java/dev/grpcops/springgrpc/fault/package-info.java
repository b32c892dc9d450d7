/** Fault injection in every Spring gRPC service, injecting nothing unless asked ({@code grpcops.fault.*}). */
package dev.grpcops.springgrpc.fault;
