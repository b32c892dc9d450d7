/** Deadline budgets on every served and downstream call ({@code grpcops.budget.*}). */
package dev.grpcops.autoconfigure.budget;
