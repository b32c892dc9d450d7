/** The interceptors behind {@link dev.grpcops.deadline.BudgetInterceptors}. Not API. */
package dev.grpcops.deadline.internal;
