/**
 * grpcops on plain grpc-java: deadline budgets shared by every hop ({@code deadline}), retries that
 * cannot become a storm ({@code retry}), fair admission under overload ({@code admission}), admin
 * authorization ({@code admin}), drain-before-stop ({@code drain}), request guards ({@code guard}),
 * channel configs and reconnects ({@code client}) and the {@code list:///} resolver ({@code resolver}).
 * Each package's root is its API; {@code internal} packages may change in any release and are not
 * to be used outside this module. {@link dev.grpcops.InfrastructureServices} names the services the
 * features leave alone. References such as "design §4" in this library's comments point at the
 * sections of docs/design.md, which gives each rule, its numbers and why.
 */
package dev.grpcops;
