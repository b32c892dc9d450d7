package dev.grpcops.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class KubernetesTargetTests {

    private static KubernetesTarget parse(String path) {
        return KubernetesTarget.parse("kubernetes://" + path, "", path, () -> "mine");
    }

    @ParameterizedTest
    @CsvSource({
        "/pricing.grpcops:50062,                    pricing, grpcops, 50062, ",
        "/pricing.grpcops:grpc,                     pricing, grpcops, 0,     grpc",
        "/pricing:grpc,                             pricing, mine,    0,     grpc",
        "/stock-headless.grpcops.svc:50061,         stock-headless, grpcops, 50061, ",
        "/stock.grpcops.svc.cluster.local:grpc-web, stock,   grpcops, 0,     grpc-web",
    })
    void readsServiceNamespaceAndPort(String path, String service, String namespace, int number, String name) {
        KubernetesTarget target = parse(path);
        assertThat(target.service()).isEqualTo(service);
        assertThat(target.namespace()).isEqualTo(namespace);
        assertThat(target.portNumber()).isEqualTo(number);
        assertThat(target.portName()).isEqualTo(name);
    }

    @Test
    void theAuthorityIsTheServicesDnsName() {
        assertThat(parse("/pricing.grpcops:50062").authority()).isEqualTo("pricing.grpcops.svc:50062");
        assertThat(parse("/pricing.grpcops:grpc").authority()).isEqualTo("pricing.grpcops.svc");
    }

    @Test
    void theNamespaceIsAskedForOnlyWhenTheTargetNamesNone() {
        KubernetesTarget target = KubernetesTarget.parse("t", null, "/a.b:1", () -> {
            throw new AssertionError("not needed");
        });
        assertThat(target.namespace()).isEqualTo("b");
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "/                  | names no Service",
                "/pricing           | names no port",
                "/pricing:0         | port 0 is not 1-65535",
                "/pricing:123456789012 | port 123456789012 is not 1-65535",
                "/pricing_x:grpc    | 'pricing_x' is not a valid Service name",
                "/1pricing:grpc     | '1pricing' is not a valid Service name",
                "/pricing.Grpcops:1 | 'Grpcops' is not a valid namespace name",
                "/pricing.:1        | '' is not a valid namespace name",
                "/pricing:GRPC      | 'GRPC' is neither a port number nor a valid port name",
                "/pricing:a-very-long-port-name | is neither a port number nor a valid port name",
            })
    void aBadTargetIsRefusedSayingWhyAndWhatIsExpected(String path, String message) {
        assertThatIllegalArgumentException()
                .isThrownBy(() -> parse(path))
                .withMessageContaining(message)
                .withMessageContaining(KubernetesTarget.FORM);
    }
}
