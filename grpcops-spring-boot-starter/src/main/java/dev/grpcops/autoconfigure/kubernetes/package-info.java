/** The {@code kubernetes:///} resolver, when a service brings {@code grpcops-kubernetes} ({@code grpcops.kubernetes.*}). */
package dev.grpcops.autoconfigure.kubernetes;
