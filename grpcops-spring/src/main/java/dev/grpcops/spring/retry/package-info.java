/** Retries within the deadline budget: their properties ({@code grpcops.retry.*}), metrics and beans, for either starter. */
package dev.grpcops.spring.retry;
