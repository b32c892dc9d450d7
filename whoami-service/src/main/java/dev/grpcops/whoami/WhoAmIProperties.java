package dev.grpcops.whoami;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Who this replica says it is.
 *
 * @param podName the name Who answers (env POD_NAME, from the downward API in Kubernetes)
 */
@ConfigurationProperties("whoami")
record WhoAmIProperties(String podName) {

    WhoAmIProperties {
        podName = podName == null || podName.isBlank() ? "local" : podName;
    }
}
