/** Server limits: their properties ({@code grpcops.server.*}) and metrics, for either starter. */
package dev.grpcops.spring.server;
