package dev.grpcops.bench;

import java.util.Arrays;

/**
 * The hand-written chain of design §12, one role per process:
 *
 * <pre>
 * java -jar grpcops-bench.jar stock   PORT
 * java -jar grpcops-bench.jar pricing PORT STOCK_TARGET      (e.g. 127.0.0.1:52071)
 * java -jar grpcops-bench.jar edge    PORT PRICING_TARGET
 * java -jar grpcops-bench.jar await   SECONDS ROLE=TARGET...  (ROLE: stock|pricing|edge)
 * java -jar grpcops-bench.jar otlp-sink PORT                 (an OTLP/HTTP trace receiver that counts spans)
 * </pre>
 *
 * Every server listens on 127.0.0.1 only and stops on SIGTERM. {@code await} makes one real call
 * per role (Check, Quote, Checkout) until each succeeds or the time is up (exit 1).
 */
public final class Bench {

    private Bench() {}

    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            usage("no role given");
        }
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        try {
            switch (args[0]) {
                case "stock" -> BenchStock.main(rest);
                case "pricing" -> BenchPricing.main(rest);
                case "edge" -> BenchEdge.main(rest);
                case "await" -> System.exit(Await.main(rest));
                case "otlp-sink" -> OtlpSink.main(rest);
                default -> usage("unknown role: " + args[0]);
            }
        } catch (IllegalArgumentException e) {
            usage(e.getMessage());
        }
    }

    private static void usage(String problem) {
        System.err.println("grpcops-bench: " + problem);
        System.err.println("usage: java -jar grpcops-bench.jar stock PORT");
        System.err.println("       java -jar grpcops-bench.jar pricing PORT STOCK_TARGET");
        System.err.println("       java -jar grpcops-bench.jar edge PORT PRICING_TARGET");
        System.err.println(
                "       java -jar grpcops-bench.jar await SECONDS stock=TARGET|pricing=TARGET|edge=TARGET...");
        System.err.println("       java -jar grpcops-bench.jar otlp-sink PORT");
        System.exit(2);
    }
}
