package dev.grpcops.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * A {@code *.internal} package belongs to its module: no other module's code, main or test, may use
 * one of its types. What adopters can use is what the suite's own services and CLI use.
 */
class InternalPackagesTests {

    private static final Path ROOT = Paths.get("..").toAbsolutePath().normalize();

    @Test
    void noModuleUsesAnotherModulesInternalTypes() throws IOException {
        Map<String, String> moduleOfClass = new HashMap<>();
        Map<String, JavaClasses> classesOfModule = new HashMap<>();
        for (Path module : modules()) {
            List<Path> outputs = Stream.of("target/classes", "target/test-classes")
                    .map(module::resolve)
                    .filter(Files::isDirectory)
                    .toList();
            JavaClasses classes = new ClassFileImporter().importPaths(outputs);
            String name = ROOT.relativize(module).toString();
            classesOfModule.put(name, classes);
            classes.forEach(type -> moduleOfClass.put(type.getName(), name));
        }
        assertThat(classesOfModule)
                .as("modules compiled (run mvn verify from the root)")
                .containsKeys("grpcops-core", "grpcops-spring-boot-starter", "edge-service", "cli", "examples/greeter");

        List<String> violations = new ArrayList<>();
        classesOfModule.forEach((module, classes) -> {
            for (JavaClass type : classes) {
                for (Dependency dependency : type.getDirectDependenciesFromSelf()) {
                    JavaClass target = dependency.getTargetClass();
                    String owner = moduleOfClass.get(target.getName());
                    if (isInternal(target) && owner != null && !owner.equals(module)) {
                        violations.add(module + ": " + dependency.getDescription());
                    }
                }
            }
        });
        assertThat(violations.stream().distinct().sorted().collect(Collectors.toList()))
                .as("uses of another module's internal types")
                .isEmpty();
    }

    private static boolean isInternal(JavaClass type) {
        return java.util.Arrays.asList(type.getPackageName().split("\\.")).contains("internal");
    }

    /** Every module of the reactor with compiled classes (this one's own rules aside), examples included. */
    static List<Path> modules() throws IOException {
        List<Path> candidates = new ArrayList<>();
        try (Stream<Path> dirs = Files.list(ROOT)) {
            dirs.forEach(candidates::add);
        }
        for (String nested : List.of("examples", "proto")) {
            if (Files.isDirectory(ROOT.resolve(nested))) {
                try (Stream<Path> modules = Files.list(ROOT.resolve(nested))) {
                    modules.forEach(candidates::add);
                }
            }
        }
        return candidates.stream()
                .filter(dir -> Files.isRegularFile(dir.resolve("pom.xml")))
                .filter(dir -> Files.isDirectory(dir.resolve("target/classes"))
                        || Files.isDirectory(dir.resolve("target/test-classes")))
                .filter(dir -> !dir.getFileName().toString().equals("architecture-tests"))
                .sorted()
                .toList();
    }
}
