package dev.grpcops.autoconfigure.client;

import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.env.EnvironmentPostProcessor;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Keepalive on by default, on both sides, as net.devh's own properties (added last: whatever the
 * application sets for them wins). A peer whose node dies or is cut off sends no FIN and no RST;
 * without keepalive its connection stays READY until TCP gives up, about 15 minutes on Linux.
 *
 * <ul>
 *   <li>Every channel ({@code grpc.client.GLOBAL.*}) pings after {@value #KEEP_ALIVE_TIME} without a
 *       read, also without calls, and closes the connection when {@value #KEEP_ALIVE_TIMEOUT} pass
 *       without an answer. On Linux grpc-java also sets the socket's TCP_USER_TIMEOUT to the
 *       timeout, so under load a connection whose writes go unacknowledged is closed within it, and
 *       a connection attempt to a silent address ends within it too. 10 s is the least grpc-java
 *       takes; 5 s leaves a loaded JVM room to answer a ping (2 s closed healthy connections during
 *       a warm-up on a busy machine).
 *   <li>Every server ({@code grpc.server.*}) permits a ping every {@value #PERMIT_KEEP_ALIVE_TIME},
 *       also without calls: with grpc-java's defaults (5 minutes, none without calls) it would
 *       answer these clients GOAWAY {@code too_many_pings}.
 * </ul>
 *
 * <p>A client of a server outside the suite that does not permit pings this often gets {@code
 * too_many_pings} and pings half as often from then on; set {@code grpc.client.<name>.keep-alive-time}
 * for it.
 */
public final class KeepAliveEnvironment implements EnvironmentPostProcessor {

    static final String KEEP_ALIVE_TIME = "10s";
    static final String KEEP_ALIVE_TIMEOUT = "5s";
    static final String PERMIT_KEEP_ALIVE_TIME = "5s";

    @Override
    public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
        Map<String, Object> defaults = new LinkedHashMap<>();
        defaults.put("grpc.client.GLOBAL.enable-keep-alive", "true");
        defaults.put("grpc.client.GLOBAL.keep-alive-time", KEEP_ALIVE_TIME);
        defaults.put("grpc.client.GLOBAL.keep-alive-timeout", KEEP_ALIVE_TIMEOUT);
        defaults.put("grpc.client.GLOBAL.keep-alive-without-calls", "true");
        defaults.put("grpc.server.permit-keep-alive-time", PERMIT_KEEP_ALIVE_TIME);
        defaults.put("grpc.server.permit-keep-alive-without-calls", "true");
        environment.getPropertySources().addLast(new MapPropertySource("grpcops-keep-alive", defaults));
    }
}
