package dev.grpcops;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * API that may change, or go, in any release: its shape is still being learned from use. Everything
 * public outside {@code internal} packages and not marked so is the stable API, which a release
 * changes only compatibly (the build's japicmp check holds it against the recorded baseline,
 * {@code grpcops-core/api/}). Code in {@code internal} packages is no API at all.
 */
@Documented
@Retention(RetentionPolicy.CLASS)
@Target({ElementType.TYPE, ElementType.METHOD, ElementType.CONSTRUCTOR, ElementType.FIELD, ElementType.PACKAGE})
public @interface Experimental {

    /** What may change, and why it is not settled yet. */
    String value() default "";
}
