/** Deadline budgets: their properties ({@code grpcops.budget.*}), metrics and beans, for either starter. */
package dev.grpcops.spring.budget;
