/** The {@code kubernetes:///} resolver: its properties ({@code grpcops.kubernetes.*}) and metrics, for either starter. */
package dev.grpcops.spring.kubernetes;
