/** The interceptors behind {@link dev.grpcops.budget.BudgetInterceptors}. Not API. */
package dev.grpcops.budget.internal;
