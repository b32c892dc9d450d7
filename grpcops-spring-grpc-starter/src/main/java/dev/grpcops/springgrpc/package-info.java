/**
 * grpcops-core as Spring Boot 4 auto-configuration for Spring gRPC services, one package per
 * feature, each importing the shared {@code dev.grpcops.spring} layer's beans and registering them
 * Spring gRPC's way: {@code @GlobalServerInterceptor} and {@code @GlobalClientInterceptor} at
 * {@link dev.grpcops.springgrpc.GrpcopsInterceptorOrder}, {@code ServerBuilderCustomizer}, {@code
 * GrpcChannelBuilderCustomizer}. The properties are the same {@code grpcops.*} as the net.devh
 * starter's.
 */
package dev.grpcops.springgrpc;
