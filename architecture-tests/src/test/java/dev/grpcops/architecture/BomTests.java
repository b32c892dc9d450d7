package dev.grpcops.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * grpcops-bom promises the versions the suite is built and tested with: its own, and those of gRPC,
 * protobuf, net.devh and guava, held here to the root pom's.
 */
class BomTests {

    private static final Path ROOT = Paths.get("..").toAbsolutePath().normalize();
    private static final Pattern PROPERTY = Pattern.compile("<([a-z.-]+\\.version)>([^<]+)</\\1>");
    private static final Pattern PROJECT_VERSION =
            Pattern.compile("<artifactId>(grpcops-parent|grpcops-bom)</artifactId>\\s*<version>([^<]+)</version>");

    @Test
    void theBomsVersionsAreTheBuildsOwn() throws IOException {
        String root = Files.readString(ROOT.resolve("pom.xml"));
        String bom = Files.readString(ROOT.resolve("grpcops-bom/pom.xml"));
        Map<String, String> rootVersions = properties(root);
        Map<String, String> bomVersions = properties(bom);
        assertThat(bomVersions)
                .containsKeys("grpc.version", "protobuf.version", "grpc-spring.version", "guava.version");
        rootVersions.put("guava.version", managedVersion(root, "guava"));
        bomVersions.forEach((name, version) -> assertThat(version)
                .as("%s in grpcops-bom/pom.xml against the root pom", name)
                .isEqualTo(rootVersions.get(name)));
        assertThat(projectVersion(bom)).isEqualTo(projectVersion(root));
    }

    @Test
    void theBomManagesEveryPublishedModule() throws IOException {
        String bom = Files.readString(ROOT.resolve("grpcops-bom/pom.xml"));
        for (String module : List.of(
                "grpcops-core",
                "grpcops-spring",
                "grpcops-spring-boot-starter",
                "grpcops-spring-grpc-starter",
                "grpcops-kubernetes",
                "grpcops-proto")) {
            assertThat(bom).as(module).contains("<artifactId>" + module + "</artifactId>");
        }
    }

    private static Map<String, String> properties(String pom) {
        Map<String, String> versions = new LinkedHashMap<>();
        Matcher matcher = PROPERTY.matcher(pom);
        while (matcher.find()) {
            versions.put(matcher.group(1), matcher.group(2));
        }
        return versions;
    }

    private static String managedVersion(String pom, String artifactId) {
        Matcher matcher = Pattern.compile("<artifactId>" + artifactId + "</artifactId>\\s*<version>([^<]+)</version>")
                .matcher(pom);
        assertThat(matcher.find()).as(artifactId + " managed in the root pom").isTrue();
        return matcher.group(1);
    }

    private static String projectVersion(String pom) {
        Matcher matcher = PROJECT_VERSION.matcher(pom);
        assertThat(matcher.find()).isTrue();
        return matcher.group(2);
    }
}
