package dev.grpcops.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.jayway.jsonpath.JsonPath;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The README's table of properties against the configuration metadata the build generates from the
 * properties classes: every property documented, nothing documented that is not one, and every
 * default the table gives the one the code has.
 */
@Timeout(30)
class PropertiesReferenceTests {

    /** A table row: {@code | `a.b.c` / `d` | `1s` / `2s` | what |}. */
    private static final Pattern ROW = Pattern.compile("^\\|\\s*(`[a-z][^|]*?)\\s*\\|\\s*([^|]*?)\\s*\\|");

    private static final Pattern NAME = Pattern.compile("`([^`]+)`");

    private static Map<String, Object> metadata;
    /** Each documented name, with the default the table gives it (null: none in backticks). */
    private static Map<String, String> documented;
    /** Names the table lists more than once. */
    private static List<String> listedTwice;

    @BeforeAll
    static void read() throws IOException {
        metadata = new LinkedHashMap<>();
        String json = Files.readString(Path.of("target/classes/META-INF/spring-configuration-metadata.json"));
        List<Map<String, Object>> properties = JsonPath.read(json, "$.properties[*]");
        properties.forEach(property -> metadata.put((String) property.get("name"), property.get("defaultValue")));

        documented = new LinkedHashMap<>();
        listedTwice = new ArrayList<>();
        for (String line : Files.readAllLines(Path.of("README.md"))) {
            Matcher row = ROW.matcher(line.replace("\\|", "¦")); // a | inside a cell is escaped
            if (!row.find()) {
                continue;
            }
            List<String> names = names(row.group(1));
            if (names.isEmpty() || !names.get(0).matches("(grpcops|management)\\..*")) {
                continue;
            }
            String[] defaults = row.group(2).split(" / ");
            for (int i = 0; i < names.size(); i++) {
                String value = defaults.length == names.size() ? defaults[i].trim() : null;
                if (documented.containsKey(names.get(i))) {
                    listedTwice.add(names.get(i));
                }
                documented.put(names.get(i), value != null && value.matches("`[^`]*`") ? value.replace("`", "") : null);
            }
        }
    }

    /** {@code `a.b.c` / `d`} is a.b.c and a.b.d; {@code `x.calls[i].method` / `.request`} x.calls[i].method and x.calls[i].request. */
    private static List<String> names(String cell) {
        List<String> names = new ArrayList<>();
        Matcher name = NAME.matcher(cell);
        String first = null;
        while (name.find()) {
            String text = name.group(1);
            if (first == null) {
                first = text;
                names.add(text);
            } else if (cell.substring(0, name.start()).trim().endsWith("/") && text.matches("\\.?[a-z][a-z0-9.-]*")) {
                String parent = first.substring(0, first.lastIndexOf('.'));
                names.add(parent + (text.startsWith(".") ? text : "." + text));
            }
        }
        return names;
    }

    /** Whether {@code documentedName} is {@code property} or a key under it (maps, lists). */
    private static boolean covers(String documentedName, String property) {
        return documentedName.equals(property)
                || documentedName.startsWith(property + ".")
                || documentedName.startsWith(property + "[");
    }

    @Test
    void everyPropertyIsInTheTable() {
        assertThat(metadata).as("properties in the metadata").hasSizeGreaterThan(50);
        List<String> missing = metadata.keySet().stream()
                .filter(property -> documented.keySet().stream().noneMatch(name -> covers(name, property)))
                .toList();
        assertThat(missing).as("properties the README's table leaves out").isEmpty();
        assertThat(listedTwice).as("properties the README's table lists twice").isEmpty();
    }

    /** The library's names; the table also lists some of Spring Boot's ({@code management.tracing.*}). */
    @Test
    void everyNameInTheTableIsAProperty() {
        List<String> unknown = documented.keySet().stream()
                .filter(name -> name.startsWith("grpcops."))
                .filter(name -> metadata.keySet().stream().noneMatch(property -> covers(name, property)))
                .toList();
        assertThat(unknown)
                .as("names in the README's table that are no property")
                .isEmpty();
    }

    @Test
    void everyDefaultInTheTableIsTheCodes() {
        List<String> wrong = new ArrayList<>();
        documented.forEach((name, given) -> {
            Object actual = metadata.get(name);
            if (given == null || actual == null || actual instanceof List<?>) {
                return;
            }
            String expected = actual instanceof Double number && number == Math.rint(number)
                    ? Long.toString(number.longValue())
                    : actual.toString();
            if (!expected.toLowerCase(Locale.ROOT).equals(given.toLowerCase(Locale.ROOT))) {
                wrong.add(name + ": the table says " + given + ", the code " + expected);
            }
        });
        assertThat(documented.values())
                .as("defaults read from the table")
                .filteredOn(v -> v != null)
                .hasSizeGreaterThan(30);
        assertThat(wrong).as("defaults that differ").isEmpty();
    }
}
