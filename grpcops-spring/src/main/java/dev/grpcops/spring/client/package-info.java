/** Outgoing channels: their properties ({@code grpcops.client.*}), balancing metrics and what follows each channel, for either starter. */
package dev.grpcops.spring.client;
