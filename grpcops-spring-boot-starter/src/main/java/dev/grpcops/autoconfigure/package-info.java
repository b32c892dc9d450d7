/**
 * grpcops-core as Spring Boot auto-configuration for net.devh gRPC services, one package per
 * feature, each with typed properties under {@code grpcops.*}, Micrometer metrics when a meter
 * registry is there, and beans that back off when the application defines its own.
 * {@link dev.grpcops.autoconfigure.GrpcopsInterceptorOrder} places every interceptor among net.devh's.
 */
package dev.grpcops.autoconfigure;
