/** The interceptors behind {@link dev.grpcops.admission.AdmissionInterceptors}. Not API. */
package dev.grpcops.admission.internal;
