/**
 * Admin methods (drain, resume, fault injection) that change what the cluster does, and the bearer
 * token that guards them: {@link dev.grpcops.admin.AdminAuthorization} builds the server interceptor,
 * {@link dev.grpcops.admin.AdminCredentials} the client side, {@link dev.grpcops.admin.AdminTokens}
 * refuses placeholders and short tokens at start.
 */
package dev.grpcops.admin;
