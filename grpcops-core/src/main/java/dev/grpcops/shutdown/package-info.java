/**
 * Stopping without failing a call: {@link dev.grpcops.shutdown.DrainBeforeStop} reports NOT_SERVING on
 * every health name while still serving, waits for traffic to move away, stops taking new calls and
 * lets those in flight finish; {@link dev.grpcops.shutdown.InFlightCalls} counts them.
 */
package dev.grpcops.shutdown;
