package dev.grpcops.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The rules live in the repository: code and docs cite sections of {@code docs/design.md}
 * ("design §9", links to {@code design.md#9-...}), and every section cited is there. Nothing cites a
 * document the repository does not hold.
 */
class DesignSectionsTests {

    private static final Path ROOT = Paths.get("..").toAbsolutePath().normalize();
    private static final Pattern CITED = Pattern.compile("design §(\\d+)|design\\.md#(\\d+)-");
    private static final Pattern HEADING = Pattern.compile("(?m)^## §(\\d+) ");
    /** A citation of the product specification, which is not part of the repository. */
    private static final String OUTSIDE = "SPEC" + " §";

    private static final Set<String> TEXT = Set.of("java", "md", "yml", "yaml", "xml", "sh", "properties", "json");

    @Test
    void everyCitedSectionOfTheDesignExists() {
        Set<Integer> sections = new TreeSet<>();
        Matcher heading = HEADING.matcher(read(ROOT.resolve("docs/design.md")));
        while (heading.find()) {
            sections.add(Integer.parseInt(heading.group(1)));
        }
        assertThat(sections).as("sections of docs/design.md").isNotEmpty();

        Set<String> missing = new TreeSet<>();
        for (Path file : textFiles()) {
            Matcher cited = CITED.matcher(read(file));
            while (cited.find()) {
                int section = Integer.parseInt(cited.group(1) != null ? cited.group(1) : cited.group(2));
                if (!sections.contains(section)) {
                    missing.add(ROOT.relativize(file) + ": §" + section);
                }
            }
        }
        assertThat(missing)
                .as("sections cited that docs/design.md does not have (it has %s)", sections)
                .isEmpty();
    }

    @Test
    void nothingCitesADocumentOutsideTheRepository() {
        List<String> outside = textFiles().stream()
                .filter(file -> read(file).contains(OUTSIDE))
                .map(file -> ROOT.relativize(file).toString())
                .toList();
        assertThat(outside)
                .as("files citing SPEC, which the repository does not hold")
                .isEmpty();
    }

    private static List<Path> textFiles() {
        try (Stream<Path> files = Files.walk(ROOT)) {
            return files.filter(Files::isRegularFile)
                    .filter(file -> {
                        String path = ROOT.relativize(file).toString();
                        return !path.startsWith(".git")
                                && !path.contains("/target/")
                                && !path.startsWith("target/")
                                && !path.contains("node_modules");
                    })
                    .filter(file -> {
                        String name = file.getFileName().toString();
                        int dot = name.lastIndexOf('.');
                        return dot > 0 && TEXT.contains(name.substring(dot + 1));
                    })
                    .collect(Collectors.toList());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return ""; // not text after all
        }
    }
}
