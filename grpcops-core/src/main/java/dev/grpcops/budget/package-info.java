/**
 * The deadline budget: each hop keeps a reserve for itself, applies a default when the caller sent
 * no deadline, and does not send a downstream call it knows cannot finish.
 * {@link dev.grpcops.budget.BudgetRules} holds the four numbers as pure rules,
 * {@link dev.grpcops.budget.Budget} is the served call's budget (in the gRPC context),
 * {@link dev.grpcops.budget.BudgetInterceptors} puts both to work on a server and its channels,
 * {@link dev.grpcops.budget.BudgetListener} is the metrics seam. Thread-safe; nothing blocks.
 */
package dev.grpcops.budget;
