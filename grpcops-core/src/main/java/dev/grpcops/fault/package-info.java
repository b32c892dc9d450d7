/**
 * Faults injected on purpose, off by default: an extra delay, a periodic stall, a share of calls
 * failed with {@code UNAVAILABLE}. {@link dev.grpcops.fault.FaultInjection} is the interceptor and
 * the admin service ({@code grpcops.v1.Faults}) that sets them at run time; {@link dev.grpcops.fault.Faults}
 * holds the settings, checked against their bounds.
 */
package dev.grpcops.fault;
