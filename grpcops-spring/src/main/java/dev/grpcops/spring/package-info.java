/**
 * The Spring layer both starters share, whichever gRPC integration a service runs on (net.devh's
 * on Spring Boot 3, Spring gRPC's on Spring Boot 4): one package per feature, each with its typed
 * {@code grpcops.*} properties, its Micrometer listener and a {@code *Configuration} of the beans of
 * core types that each starter's auto-configuration imports, registering the interceptors its own
 * way. Built against Spring Boot 3.5, it uses only what Spring Boot 4 keeps in place.
 */
package dev.grpcops.spring;
