package dev.grpcops.autoconfigure.server;

import io.grpc.ServerInterceptor;
import java.util.List;
import net.devh.boot.grpc.server.interceptor.GlobalServerInterceptorConfigurer;
import net.devh.boot.grpc.server.scope.GrpcRequestScope;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;

/**
 * Takes net.devh's request scope out of the server's interceptors when no bean lives in it.
 * net.devh puts {@link GrpcRequestScope} in front of every call whether or not any bean uses
 * {@code @Scope("grpcRequest")}, and it costs every call a context of its own, attached around each
 * callback, and a cancellation listener (measured: docs/performance.md). A bean definition in that
 * scope, in this context or a parent, keeps it.
 */
final class UnusedRequestScope implements GlobalServerInterceptorConfigurer {

    private final ConfigurableListableBeanFactory beans;

    UnusedRequestScope(ConfigurableListableBeanFactory beans) {
        this.beans = beans;
    }

    @Override
    public void configureServerInterceptors(List<ServerInterceptor> interceptors) {
        if (!used()) {
            interceptors.removeIf(GrpcRequestScope.class::isInstance);
        }
    }

    private boolean used() {
        BeanFactory factory = beans;
        while (factory instanceof ConfigurableListableBeanFactory listable) {
            for (String name : listable.getBeanDefinitionNames()) {
                // Merged: a child definition may inherit the scope from its parent definition.
                if (GrpcRequestScope.GRPC_REQUEST_SCOPE_NAME.equals(
                        listable.getMergedBeanDefinition(name).getScope())) {
                    return true;
                }
            }
            factory = listable.getParentBeanFactory(); // a parent context's beans are served by this scope too
        }
        return false;
    }
}
