/**
 * The server's lifecycle ({@code grpcops.shutdown.*}): health names, SERVING once the server listens
 * and has warmed up, calls in flight, and drain-before-stop when the application stops.
 */
package dev.grpcops.autoconfigure.shutdown;
