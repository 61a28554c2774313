package io.rulesync.testing.needs;

import io.rulesync.testing.tiers.Tiers;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;

/**
 * The test uses a Kafka broker. It is always there (an in-process KRaft broker, or Testcontainers
 * where Docker runs), so nothing is checked: this places the test in the integration tier.
 */
@Target({ElementType.TYPE, ElementType.METHOD, ElementType.ANNOTATION_TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@Tag(Tiers.INTEGRATION)
public @interface RequiresKafka {}
