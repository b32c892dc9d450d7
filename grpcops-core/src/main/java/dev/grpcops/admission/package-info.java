/**
 * Fair admission under overload, after Kubernetes API Priority and Fairness:
 * {@link dev.grpcops.admission.Admission} shares a server's seats among priority levels and queues
 * calls fairly per flow; a call that cannot finish in time is rejected at once, and no thread waits
 * in a queue. {@link dev.grpcops.admission.AdmissionInterceptors} admits every call of a grpc-java
 * server and forwards the caller downstream; {@link dev.grpcops.admission.CallerPolicy} maps callers
 * to levels. Work other than gRPC calls can be offered as an {@link dev.grpcops.admission.AdmissionRequest}.
 */
package dev.grpcops.admission;
