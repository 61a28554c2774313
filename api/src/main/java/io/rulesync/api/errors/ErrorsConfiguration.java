package io.rulesync.api.errors;

import io.micrometer.core.instrument.MeterRegistry;
import org.apache.catalina.Lifecycle;
import org.apache.catalina.Valve;
import org.apache.catalina.core.StandardHost;
import org.apache.catalina.valves.ErrorReportValve;
import org.springframework.boot.tomcat.TomcatContextCustomizer;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * Every refusal is a problem (RFC 9457), whoever refuses: a body too big before it is read, a query parameter no
 * handler declares, Spring's own error path, and Tomcat's refusals before Spring sees the request.
 */
@Configuration(proxyBeanMethods = false)
public class ErrorsConfiguration {
    /** In place of Spring Boot's /error page, which answers JSON of its own shape (and 500 when asked directly). */
    @Bean
    ProblemErrorController problemErrorController() {
        return new ProblemErrorController();
    }

    /** Request bodies are bounded before they are read ({@link BodyLimits}): the first filter of all. */
    @Bean
    FilterRegistrationBean<BodyLimits> bodyLimits(MeterRegistry meters) {
        FilterRegistrationBean<BodyLimits> r = new FilterRegistrationBean<>(new BodyLimits(meters));
        r.addUrlPatterns("/*");
        r.setOrder(Ordered.HIGHEST_PRECEDENCE);
        return r;
    }

    /** Query parameters no handler declares are refused, not ignored. */
    @Bean
    WebMvcConfigurer declaredParameters() {
        DeclaredParameters check = new DeclaredParameters();
        return new WebMvcConfigurer() {
            @Override
            public void addInterceptors(InterceptorRegistry registry) {
                registry.addInterceptor(check);
            }
        };
    }

    /**
     * Tomcat's own refusals (a malformed URL, headers too large) as problems: the host reports errors
     * with {@link ProblemReportValve}. The host installs its error report valve when it starts; Spring
     * Boot adds an HTML one of its own before that, which goes.
     */
    @Bean
    TomcatContextCustomizer problemReports() {
        return context -> {
            if (!(context.getParent() instanceof StandardHost host)) {
                throw new IllegalStateException(
                        "expected the api's context inside a Tomcat host, not " + context.getParent());
            }
            host.setErrorReportValveClass(ProblemReportValve.class.getName());
            host.addLifecycleListener(e -> {
                if (Lifecycle.BEFORE_START_EVENT.equals(e.getType())) {
                    for (Valve v : host.getPipeline().getValves()) {
                        if (v instanceof ErrorReportValve && !(v instanceof ProblemReportValve)) {
                            host.getPipeline().removeValve(v);
                        }
                    }
                }
            });
        };
    }
}
