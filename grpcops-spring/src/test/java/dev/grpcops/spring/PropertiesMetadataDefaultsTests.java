package dev.grpcops.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.jayway.jsonpath.JsonPath;
import dev.grpcops.spring.admin.AdminProperties;
import dev.grpcops.spring.admission.AdmissionProperties;
import dev.grpcops.spring.budget.BudgetProperties;
import dev.grpcops.spring.client.ClientProperties;
import dev.grpcops.spring.fault.FaultProperties;
import dev.grpcops.spring.kubernetes.KubernetesResolverProperties;
import dev.grpcops.spring.retry.RetryProperties;
import dev.grpcops.spring.server.ServerLimitsProperties;
import dev.grpcops.spring.shutdown.ShutdownProperties;
import dev.grpcops.spring.warmup.WarmUpProperties;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.beans.BeanWrapper;
import org.springframework.beans.PropertyAccessorFactory;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.core.ResolvableType;

/**
 * Every {@code *Properties} class against the configuration metadata the build generates from it:
 * a property whose default is a value (not empty, not a collection or map) shows that default in
 * the metadata, so that IDEs and the README's table show it, and the metadata's default is the one
 * the code has. A default computed by a call (into the core, say) leaves the metadata without it and
 * fails here: the properties write their defaults as literals, and each class's defaults test holds
 * the literals to the core's.
 */
@Timeout(30)
class PropertiesMetadataDefaultsTests {

    private static final List<Class<?>> PROPERTIES = List.of(
            AdminProperties.class,
            AdmissionProperties.class,
            BudgetProperties.class,
            ClientProperties.class,
            FaultProperties.class,
            KubernetesResolverProperties.class,
            RetryProperties.class,
            ServerLimitsProperties.class,
            ShutdownProperties.class,
            WarmUpProperties.class);

    /** Defaults that depend on the machine: the metadata cannot hold them. */
    private static final List<String> COMPUTED_AT_RUN_TIME = List.of("grpcops.server.executor-threads");

    @Test
    void everyValueDefaultIsInTheMetadataAndIsTheCodes() throws Exception {
        String json = Files.readString(Path.of("target/classes/META-INF/spring-configuration-metadata.json"));
        List<Map<String, Object>> properties = JsonPath.read(json, "$.properties[*]");
        List<String> problems = new ArrayList<>();
        int checked = 0;
        for (Map<String, Object> property : properties) {
            String name = (String) property.get("name");
            Class<?> owner = owner(name);
            if (owner == null || COMPUTED_AT_RUN_TIME.contains(name)) {
                continue;
            }
            String prefix = owner.getAnnotation(ConfigurationProperties.class).value();
            var constructor = owner.getDeclaredConstructor();
            constructor.setAccessible(true);
            BeanWrapper defaults = PropertyAccessorFactory.forBeanPropertyAccess(constructor.newInstance());
            String path = camel(name.substring(prefix.length() + 1));
            if (!defaults.isReadableProperty(path)) {
                continue; // a map's or a list's entries
            }
            Object codeDefault = defaults.getPropertyValue(path);
            if (codeDefault == null || codeDefault instanceof Collection<?> || codeDefault instanceof Map<?, ?>) {
                continue;
            }
            Object metadataDefault = property.get("defaultValue");
            if (metadataDefault == null) {
                problems.add(name + ": the code's default " + codeDefault + " is not in the metadata (not a literal?)");
                continue;
            }
            checked++;
            Object bound = new Binder(new MapConfigurationPropertySource(Map.of(name, String.valueOf(metadataDefault))))
                    .bind(name, Bindable.of(ResolvableType.forClass(codeDefault.getClass())))
                    .orElse(null);
            if (!Objects.equals(bound, codeDefault)) {
                problems.add(name + ": the metadata says " + metadataDefault + ", the code has " + codeDefault);
            }
        }
        assertThat(problems).isEmpty();
        assertThat(checked).as("properties with a default checked").isGreaterThan(40);
    }

    private static Class<?> owner(String name) {
        Class<?> best = null;
        int bestLength = -1;
        for (Class<?> type : PROPERTIES) {
            String prefix = type.getAnnotation(ConfigurationProperties.class).value();
            if (name.startsWith(prefix + ".") && prefix.length() > bestLength) {
                best = type;
                bestLength = prefix.length();
            }
        }
        return best;
    }

    /** {@code limiter.max-tokens} → {@code limiter.maxTokens}. */
    private static String camel(String kebab) {
        StringBuilder camel = new StringBuilder();
        boolean upper = false;
        for (char c : kebab.toCharArray()) {
            if (c == '-') {
                upper = true;
            } else {
                camel.append(upper ? Character.toUpperCase(c) : c);
                upper = false;
            }
        }
        return camel.toString();
    }
}
