/** Health names, calls in flight, and drain-before-stop when the application stops ({@code grpcops.shutdown.*}). */
package dev.grpcops.autoconfigure.drain;
