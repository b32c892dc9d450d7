/** Retries within the deadline budget, limited per target ({@code grpcops.retry.*}). */
package dev.grpcops.autoconfigure.retry;
