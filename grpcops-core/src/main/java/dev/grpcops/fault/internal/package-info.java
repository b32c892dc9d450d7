/** The interceptor and the admin service behind {@link dev.grpcops.fault.FaultInjection}. Not API. */
package dev.grpcops.fault.internal;
