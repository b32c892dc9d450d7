/** The warm-up before SERVING: its properties ({@code grpcops.warmup.*}), for either starter. */
package dev.grpcops.spring.warmup;
