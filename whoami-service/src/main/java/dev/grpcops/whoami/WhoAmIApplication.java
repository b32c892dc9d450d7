package dev.grpcops.whoami;

import dev.grpcops.admin.AdminMethods;
import dev.grpcops.proto.whoami.v1.WhoAmIGrpc;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;
import org.springframework.context.annotation.Bean;

/** Answers which pod it is, and can be taken out of traffic without being killed (design §5). */
@SpringBootApplication
@ConfigurationPropertiesScan
public class WhoAmIApplication {

    public static void main(String[] args) {
        SpringApplication.run(WhoAmIApplication.class, args);
    }

    /** Drain and Resume change what the cluster routes: they need the admin token. */
    @Bean
    AdminMethods whoAmIAdminMethods() {
        return AdminMethods.of(WhoAmIGrpc.getDrainMethod(), WhoAmIGrpc.getResumeMethod());
    }
}
