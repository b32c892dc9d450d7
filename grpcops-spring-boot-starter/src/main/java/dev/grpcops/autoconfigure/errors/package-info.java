/** Status exceptions thrown by handlers become their status, not UNKNOWN ({@code grpcops.errors.*}). */
package dev.grpcops.autoconfigure.errors;
