/** Server limits, bad-request guards, the bounded executor and connection age ({@code grpcops.server.*}). */
package dev.grpcops.autoconfigure.server;
