package io.rulesync.api.access;

import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.context.annotation.ClassPathScanningCandidateComponentProvider;
import org.springframework.core.type.filter.AnnotationTypeFilter;
import org.springframework.stereotype.Controller;
import org.springframework.web.context.support.StaticWebApplicationContext;
import org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerMapping;

/**
 * The api's routes as the dispatcher maps them, without a running api: every controller of the api's
 * packages, read by Spring MVC's own handler mapping (the controllers are declared, never made).
 */
final class ControllerRoutes {
    private ControllerRoutes() {}

    static AccessRules rules() {
        StaticWebApplicationContext context = new StaticWebApplicationContext();
        ClassPathScanningCandidateComponentProvider scan = new ClassPathScanningCandidateComponentProvider(false);
        scan.addIncludeFilter(new AnnotationTypeFilter(Controller.class));
        for (BeanDefinition found : scan.findCandidateComponents("io.rulesync.api")) {
            RootBeanDefinition d = new RootBeanDefinition(found.getBeanClassName());
            d.setLazyInit(true);
            context.registerBeanDefinition(found.getBeanClassName(), d);
        }
        context.refresh();
        RequestMappingHandlerMapping mapping = new RequestMappingHandlerMapping();
        mapping.setApplicationContext(context);
        mapping.setEmbeddedValueResolver(context.getBeanFactory()::resolveEmbeddedValue);
        mapping.afterPropertiesSet();
        return AccessRules.of(mapping.getHandlerMethods());
    }
}
