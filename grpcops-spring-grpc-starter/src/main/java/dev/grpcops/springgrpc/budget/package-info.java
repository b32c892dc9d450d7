/** Deadline budgets on every call a Spring gRPC service serves and makes ({@code grpcops.budget.*}). */
package dev.grpcops.springgrpc.budget;
