package dev.grpcops.kubernetes;

import java.util.regex.Pattern;

/**
 * A parsed {@code kubernetes:///<service>[.<namespace>]:<port number or port name>} target. The
 * API server is the pod's own (its service account), so the target names no authority.
 */
record KubernetesTarget(String text, String service, String namespace, int portNumber, String portName) {

    /** A Service name is a DNS-1035 label. */
    private static final Pattern SERVICE = Pattern.compile("[a-z]([-a-z0-9]{0,61}[a-z0-9])?");
    /** A namespace is a DNS-1123 label. */
    private static final Pattern NAMESPACE = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");
    /** A port name is an IANA service name, as in a Service's ports[].name. */
    private static final Pattern PORT_NAME = Pattern.compile("[a-z0-9]([-a-z0-9]{0,13}[a-z0-9])?");

    static final String FORM = "kubernetes:///<service>[.<namespace>]:<port number or name>";

    /** The port as written: its number or its name. */
    String port() {
        return portName != null ? portName : String.valueOf(portNumber);
    }

    /** {@code <service>.<namespace>.svc:<port>}, as DNS would name it, for the channel's authority. */
    String authority() {
        return service + "." + namespace + ".svc" + (portName == null ? ":" + portNumber : "");
    }

    /**
     * @param text the target as the channel was given it, for messages
     * @param authority the URI's authority: must be empty
     * @param path the URI's path, {@code /service.namespace:port}
     * @param podNamespace the namespace to use when the target names none
     * @throws IllegalArgumentException saying what is wrong and what is expected
     */
    static KubernetesTarget parse(
            String text, String authority, String path, java.util.function.Supplier<String> podNamespace) {
        if (authority != null && !authority.isEmpty()) {
            throw bad(
                    text,
                    "names an authority ('" + authority + "'); the API server is the pod's own, so leave it"
                            + " empty (three slashes)");
        }
        if (path == null || path.length() <= 1 || !path.startsWith("/")) {
            throw bad(text, "names no Service");
        }
        String name = path.substring(1);
        int colon = name.lastIndexOf(':');
        if (colon < 0 || colon == name.length() - 1) {
            throw bad(text, "names no port (a number, or the name of one of the Service's ports)");
        }
        String host = name.substring(0, colon);
        String port = name.substring(colon + 1);
        String[] labels = host.split("\\.", -1);
        // service.namespace.svc[.cluster.local] is accepted too, as people copy it from DNS names.
        if (labels.length > 2 && !labels[2].equals("svc")) {
            throw bad(text, "'" + host + "' is not <service> or <service>.<namespace>");
        }
        String service = labels[0];
        if (!SERVICE.matcher(service).matches()) {
            throw bad(
                    text,
                    "'" + service + "' is not a valid Service name (lower-case letters, digits and '-',"
                            + " starting with a letter, at most 63)");
        }
        String namespace = labels.length > 1 ? labels[1] : podNamespace.get();
        if (!NAMESPACE.matcher(namespace).matches()) {
            throw bad(text, "'" + namespace + "' is not a valid namespace name");
        }
        if (port.chars().allMatch(Character::isDigit)) {
            int number;
            try {
                number = Integer.parseInt(port);
            } catch (NumberFormatException e) {
                number = -1;
            }
            if (number < 1 || number > 65535) {
                throw bad(text, "port " + port + " is not 1-65535");
            }
            return new KubernetesTarget(text, service, namespace, number, null);
        }
        if (!PORT_NAME.matcher(port).matches()) {
            throw bad(text, "'" + port + "' is neither a port number nor a valid port name");
        }
        return new KubernetesTarget(text, service, namespace, 0, port);
    }

    private static IllegalArgumentException bad(String text, String why) {
        return new IllegalArgumentException("target '" + text + "' " + why + "; expected " + FORM);
    }
}
