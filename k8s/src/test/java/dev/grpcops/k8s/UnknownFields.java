package dev.grpcops.k8s;

import java.beans.IntrospectionException;
import java.beans.Introspector;
import java.beans.PropertyDescriptor;
import java.lang.reflect.InvocationTargetException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * fabric8's models keep a field they do not know in {@code additionalProperties} instead of
 * failing; this finds every such field, with its path, so that a typo (say {@code readinesProbe})
 * fails the test instead of being ignored by the cluster.
 */
final class UnknownFields {

    private UnknownFields() {}

    static List<String> in(Object object) {
        List<String> found = new ArrayList<>();
        walk(object, "", found);
        return found;
    }

    private static void walk(Object value, String path, List<String> found) {
        if (value == null) {
            return;
        }
        if (value instanceof Collection<?> items) {
            int i = 0;
            for (Object item : items) {
                walk(item, path + "[" + i++ + "]", found);
            }
            return;
        }
        if (value instanceof Map<?, ?> map) {
            map.forEach((key, item) -> walk(item, path + "." + key, found));
            return;
        }
        if (!value.getClass().getName().startsWith("io.fabric8.kubernetes.api.model")) {
            return;
        }
        try {
            for (PropertyDescriptor property :
                    Introspector.getBeanInfo(value.getClass(), Object.class).getPropertyDescriptors()) {
                if (property.getReadMethod() == null) {
                    continue;
                }
                Object child = property.getReadMethod().invoke(value);
                if (property.getName().equals("additionalProperties")) {
                    ((Map<?, ?>) child).keySet().forEach(key -> found.add(path + "." + key));
                } else {
                    walk(child, path + "." + property.getName(), found);
                }
            }
        } catch (IntrospectionException | IllegalAccessException | InvocationTargetException e) {
            throw new IllegalStateException(e);
        }
    }
}
