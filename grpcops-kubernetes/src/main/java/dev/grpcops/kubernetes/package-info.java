/**
 * The {@code kubernetes:///service.namespace:port} name resolver: it watches the Service's
 * EndpointSlices, so that new pods get calls at once and pods that are not ready get none.
 * {@link dev.grpcops.kubernetes.KubernetesNameResolverProvider} is the entry point,
 * {@link dev.grpcops.kubernetes.ResolverListener} the metrics seam.
 */
package dev.grpcops.kubernetes;
