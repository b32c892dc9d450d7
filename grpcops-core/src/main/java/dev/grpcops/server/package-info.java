/**
 * What no client can use to make a server fail or fill its log: {@link
 * dev.grpcops.server.MalformedRequests} answers undecodable requests {@code INVALID_ARGUMENT}, {@link
 * dev.grpcops.server.UnknownMethods} answers made-up method names {@code UNIMPLEMENTED} without a
 * metric series each, {@link dev.grpcops.server.ServerExecutor} keeps a burst of calls from becoming
 * thousands of threads or an unbounded queue; each logs at most one line per interval.
 */
package dev.grpcops.server;
