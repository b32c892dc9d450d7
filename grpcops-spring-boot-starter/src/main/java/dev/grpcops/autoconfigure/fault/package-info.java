/** Fault injection in every service, injecting nothing unless asked ({@code grpcops.fault.*}). */
package dev.grpcops.autoconfigure.fault;
