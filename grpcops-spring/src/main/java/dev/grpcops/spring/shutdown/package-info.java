/** The server's lifecycle: its properties ({@code grpcops.shutdown.*}) and the health names it drives, for either starter. */
package dev.grpcops.spring.shutdown;
