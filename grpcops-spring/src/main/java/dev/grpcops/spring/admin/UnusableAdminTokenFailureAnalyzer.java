package dev.grpcops.spring.admin;

import dev.grpcops.admin.AdminTokens;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * A start refused because of the admin token, told as Spring Boot's "APPLICATION FAILED TO
 * START" block: which property, what is wrong (never its value), and how to set one.
 */
public final class UnusableAdminTokenFailureAnalyzer
        extends AbstractFailureAnalyzer<AdminTokens.UnusableAdminTokenException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, AdminTokens.UnusableAdminTokenException cause) {
        return new FailureAnalysis(
                "The admin token " + cause.source() + " " + cause.problem()
                        + ": whoever can reach the gRPC port could guess it and take pods out of traffic.",
                AdminTokens.UnusableAdminTokenException.howToSet(cause.source())
                        + ". Docker Compose: GRPCOPS_ADMIN_TOKEN in your shell or in .env; Kubernetes: the"
                        + " Secret grpcops-admin (kubectl -n grpcops create secret generic grpcops-admin"
                        + " --from-literal=GRPCOPS_ADMIN_TOKEN=$(" + AdminTokens.HOW_TO_GENERATE + ")).",
                cause);
    }
}
