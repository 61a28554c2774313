package io.rulesync.agent.testing;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.LoggerFactory;
import org.slf4j.event.KeyValuePair;

/**
 * What the agent's classes log while it is open: their messages, as tests used to collect them from
 * the agent's log sink. Agents on other threads append at the same time, hence the concurrent list.
 */
public final class AgentLogs extends AppenderBase<ILoggingEvent> implements AutoCloseable {
    private final Logger logger = (Logger) LoggerFactory.getLogger("io.rulesync.agent");
    private final List<ILoggingEvent> events = new CopyOnWriteArrayList<>();

    public AgentLogs() {
        setContext(logger.getLoggerContext());
        setName("agent-logs");
        start();
        logger.addAppender(this);
    }

    @Override
    protected void append(ILoggingEvent e) {
        events.add(e);
    }

    /** Every message, formatted, in order. */
    public List<String> lines() {
        return events.stream().map(ILoggingEvent::getFormattedMessage).toList();
    }

    /** The messages logged with {@code node} as their node field, each as {@code node: message}. */
    public List<String> linesOf(String node) {
        return events.stream()
                .filter(e -> node.equals(field(e, "node")))
                .map(e -> node + ": " + e.getFormattedMessage())
                .toList();
    }

    private static Object field(ILoggingEvent e, String key) {
        List<KeyValuePair> kv = e.getKeyValuePairs();
        if (kv != null) {
            for (KeyValuePair p : kv) {
                if (p.key.equals(key)) {
                    return p.value;
                }
            }
        }
        return e.getMDCPropertyMap().get(key);
    }

    @Override
    public void close() {
        logger.detachAppender(this);
        stop();
    }
}
