package dev.grpcops.containers;

/** Whether this run is CI's: there a missing tool fails the test instead of skipping it. */
final class Ci {

    private Ci() {}

    /** {@code CI=true} (any case) or {@code CI=1}, as CI services set it. */
    static boolean isCi() {
        String ci = System.getenv("CI");
        return ci != null && (ci.equalsIgnoreCase("true") || ci.equals("1"));
    }
}
