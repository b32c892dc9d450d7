/**
 * The server's lifecycle: warm-up before SERVING ({@code grpcops.warmup.*}), health names, calls in
 * flight, and drain-before-stop when the application stops ({@code grpcops.shutdown.*}).
 */
package dev.grpcops.autoconfigure.drain;
