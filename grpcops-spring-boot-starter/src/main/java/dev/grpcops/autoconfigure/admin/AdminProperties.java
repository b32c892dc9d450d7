package dev.grpcops.autoconfigure.admin;

import org.springframework.boot.context.properties.ConfigurationProperties;

/** Authorization of admin operations, under {@code grpcops.admin}. */
@ConfigurationProperties("grpcops.admin")
public class AdminProperties {

    /**
     * Shared secret callers send as metadata "authorization: Bearer <token>" (env
     * GRPCOPS_ADMIN_TOKEN). Unset or blank: every admin operation is refused.
     */
    private String token;

    public String getToken() {
        return token;
    }

    public void setToken(String token) {
        this.token = token;
    }
}
