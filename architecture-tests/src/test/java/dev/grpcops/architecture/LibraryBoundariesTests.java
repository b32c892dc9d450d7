package dev.grpcops.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.junit.jupiter.api.Test;

/**
 * What an adopter of the library gets: grpcops-core and its contract module (grpcops-proto) carry
 * nothing of the demo suite (the chain contract, WhoAmI, the chain's input rules) and nothing of
 * Spring, which only the starter knows.
 */
class LibraryBoundariesTests {

    private static final Path ROOT = Paths.get("..").toAbsolutePath().normalize();

    private static final String[] DEMO = {
        "dev.grpcops.proto.chain..", "dev.grpcops.proto.whoami..", "dev.grpcops.chain.."
    };

    private static JavaClasses mainClassesOf(String module) {
        return new ClassFileImporter().importPath(ROOT.resolve(module).resolve("target/classes"));
    }

    @Test
    void coreUsesNothingOfTheDemoSuite() {
        noClasses()
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(DEMO)
                .because("the chain contract belongs to the services (grpcops-chain-proto), not to the library")
                .check(mainClassesOf("grpcops-core"));
    }

    @Test
    void theLibrarysContractModuleHoldsNoDemoContract() {
        noClasses()
                .should()
                .resideInAnyPackage(DEMO)
                .because("grpcops-proto is what every adopter inherits")
                .check(mainClassesOf("proto/library"));
    }

    @Test
    void coreKnowsNothingOfSpring() {
        noClasses()
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("org.springframework..", "net.devh..")
                .because("plain grpc-java users get the core without Spring; the starter translates")
                .check(mainClassesOf("grpcops-core"));
    }
}
