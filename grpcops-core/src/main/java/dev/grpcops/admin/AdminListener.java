package dev.grpcops.admin;

import io.grpc.Status;

/** What admin authorization tells about each admin call, for metrics. */
@FunctionalInterface
public interface AdminListener {

    /** Listens to nothing. */
    AdminListener NONE = (method, outcome) -> {};

    /** An admin call of {@code method} ended with {@code outcome} (OK, or why it was refused or failed). */
    void completed(String method, Status.Code outcome);
}
