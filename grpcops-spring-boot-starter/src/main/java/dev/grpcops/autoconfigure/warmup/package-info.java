/**
 * The warm-up before SERVING ({@code grpcops.warmup.*}): calls the server sends itself through its
 * own port, each marked as the process's own, before it reports SERVING.
 */
package dev.grpcops.autoconfigure.warmup;
