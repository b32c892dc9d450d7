/** Not for applications: the warm-up mark on served calls. */
package dev.grpcops.warmup.internal;
