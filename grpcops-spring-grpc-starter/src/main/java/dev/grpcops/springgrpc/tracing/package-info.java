/** The library's spans and log correlation while traces are exported, Spring gRPC's way. */
package dev.grpcops.springgrpc.tracing;
