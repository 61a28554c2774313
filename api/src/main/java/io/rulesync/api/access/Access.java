package io.rulesync.api.access;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Who may call a route, written on its handler method beside its mapping. A handler without one is for operators only
 * (deny by default: a new endpoint is never open to an agent's token by accident). {@link AccessRules} reads these from
 * the api's own handler mappings, so the path is written once, in the mapping.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface Access {
    Role[] value();

    /**
     * The route's {@code {node}} speaks for that node (an ack): only that node's own credential may call it, not one
     * bound to its cluster only, nor an unbound one; and an operator's word on what a node runs would be a forged ack.
     */
    boolean speaksForNode() default false;
}
