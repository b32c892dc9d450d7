package dev.grpcops.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;
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

    /**
     * design §18: configuration is built with builders. A public record of more than three values is
     * positional configuration: {@code new OutlierDetection(1s, 10s, 60s, 33, 30, 2, 10)}.
     */
    @Test
    void theLibraryHasNoPublicRecordOfMoreThanThreeValues() {
        for (String module : List.of(
                "grpcops-core",
                "grpcops-spring",
                "grpcops-spring-boot-starter",
                "grpcops-spring-grpc-starter",
                "grpcops-kubernetes")) {
            List<String> positional = mainClassesOf(module).stream()
                    .filter(c -> c.getRawSuperclass()
                            .map(s -> s.getName().equals("java.lang.Record"))
                            .orElse(false))
                    .filter(c -> c.getModifiers().contains(JavaModifier.PUBLIC))
                    .filter(c -> c.getFields().stream()
                                    .filter(f -> !f.getModifiers().contains(JavaModifier.STATIC))
                                    .count()
                            > 3)
                    .map(JavaClass::getName)
                    .toList();
            assertThat(positional)
                    .as("public records of more than three values in " + module)
                    .isEmpty();
        }
    }

    /**
     * design §18: one configuration shape. A default is read from the value it belongs to
     * ({@code BudgetRules.DEFAULTS.reserve()}, {@code RetryBudget.builder().build().window()}),
     * never from a {@code DEFAULT_*} constant beside it.
     */
    @Test
    void defaultsAreReadFromValuesNotConstants() {
        for (String module : List.of(
                "grpcops-core",
                "grpcops-spring",
                "grpcops-spring-boot-starter",
                "grpcops-spring-grpc-starter",
                "grpcops-kubernetes")) {
            List<String> constants = mainClassesOf(module).stream()
                    .filter(c -> c.getModifiers().contains(JavaModifier.PUBLIC))
                    .flatMap(c -> c.getFields().stream())
                    .filter(f -> f.getModifiers().contains(JavaModifier.PUBLIC)
                            && f.getModifiers().contains(JavaModifier.STATIC)
                            && f.getName().startsWith("DEFAULT_"))
                    .map(f -> f.getOwner().getName() + "." + f.getName())
                    .toList();
            assertThat(constants).as("public DEFAULT_* constants in " + module).isEmpty();
        }
    }

    /** design §18: core's messages name no Spring property; the starter translates (prefixes) them. */
    @Test
    void coresSourceNamesNoSpringProperty() throws IOException {
        // A property in a string literal; span attribute keys (grpcops.budget.remaining_ms) are not properties.
        Pattern property = Pattern.compile(
                "\"[^\"]*grpcops\\.(admin|admission|budget|client|retry|server|fault|drain|tracing)\\.[a-z-]+(?![a-z_])");
        try (Stream<Path> sources = Files.walk(ROOT.resolve("grpcops-core/src/main/java"))) {
            List<String> naming = sources.filter(p -> p.toString().endsWith(".java"))
                    .flatMap(p -> {
                        try {
                            return Files.readAllLines(p).stream()
                                    .filter(line -> !line.trim().startsWith("*")
                                            && !line.trim().startsWith("//"))
                                    .filter(line -> !line.contains("AttributeKey"))
                                    .filter(line -> property.matcher(line).find())
                                    .map(line -> ROOT.relativize(p) + ": " + line.trim());
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    })
                    .toList();
            assertThat(naming)
                    .as("string literals in core naming a grpcops.* property")
                    .isEmpty();
        }
    }
}
