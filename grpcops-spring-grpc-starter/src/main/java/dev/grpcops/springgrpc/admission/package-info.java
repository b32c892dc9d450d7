/** Fair admission in front of every call a Spring gRPC server serves ({@code grpcops.admission.*}). */
package dev.grpcops.springgrpc.admission;
