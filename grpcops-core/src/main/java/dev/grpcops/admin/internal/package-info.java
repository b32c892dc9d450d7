/** The interceptor behind {@link dev.grpcops.admin.AdminAuthorization} and its bounded refusal counts. Not API. */
package dev.grpcops.admin.internal;
