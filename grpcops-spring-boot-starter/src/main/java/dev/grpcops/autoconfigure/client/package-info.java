/** Outgoing channels: health-checked balancing and reconnects ({@code grpcops.client.*}). */
package dev.grpcops.autoconfigure.client;
