/** Plumbing the packages of this module share: metadata keys, the one timer thread, peer addresses, context listeners. Not API. */
package dev.grpcops.internal;
