/** Fault injection: its properties ({@code grpcops.fault.*}), metrics and beans, for either starter. */
package dev.grpcops.spring.fault;
