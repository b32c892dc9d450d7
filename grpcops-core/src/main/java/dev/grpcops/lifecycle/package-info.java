/** The health probe the service images run as their container healthcheck. */
package dev.grpcops.lifecycle;
