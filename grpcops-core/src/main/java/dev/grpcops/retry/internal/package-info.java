/** What marks and names the attempts of a {@link dev.grpcops.retry.Retry} call. Not API. */
package dev.grpcops.retry.internal;
