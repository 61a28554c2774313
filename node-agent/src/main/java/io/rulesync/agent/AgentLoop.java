package io.rulesync.agent;

import io.rulesync.agent.feed.DeltaSource;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/** Runs an {@link Agent} on one thread: deltas from its source (the api or Kafka), and time for retries and drift checks. */
public final class AgentLoop implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AgentLoop.class);

    private final Agent agent;
    private final DeltaSource feed;
    private final AutoCloseable acks;
    private final Thread thread;
    private final CountDownLatch started = new CountDownLatch(1);
    private volatile boolean stopping;
    private volatile Throwable died;

    public AgentLoop(Agent agent, DeltaSource feed, String name, AutoCloseable acks) {
        this.agent = agent;
        this.feed = feed;
        this.acks = acks;
        this.thread = new Thread(this::run, "agent-" + name);
    }

    public AgentLoop start() {
        thread.start();
        return this;
    }

    /** Blocks until the agent has made its first attempt to load a version. */
    public void awaitStarted() throws InterruptedException {
        started.await();
    }

    public Agent agent() {
        return agent;
    }

    /** Why the loop stopped on its own, or null. */
    public Throwable died() {
        return died;
    }

    private void run() {
        // Everything logged on this thread (the kernel adapters too) names the agent, in a JSON log.
        MDC.put("cluster", agent.cluster());
        MDC.put("node", agent.node());
        try {
            feed.start(Duration.ofMinutes(5));
            agent.start();
            started.countDown();
            while (!stopping) {
                DeltaSource.Polled polled = feed.poll(Duration.ofMillis(200));
                agent.onDeltas(polled.deltas());
                if (polled.gap() != null) {
                    agent.onGap(polled.gap());
                }
                agent.tick();
            }
        } catch (WakeupException e) {
            if (!stopping) {
                died = e;
            }
        } catch (RuntimeException | Error e) {
            died = e;
            log.atError()
                    .addKeyValue("cluster", agent.cluster())
                    .addKeyValue("node", agent.node())
                    .log("agent stopped: {}", e.toString());
        } finally {
            started.countDown();
            feed.close();
        }
    }

    @Override
    public void close() {
        stopping = true;
        feed.wakeup();
        try {
            thread.join(30_000);
            acks.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            log.warn("closing the ack sink: {}", e.getMessage());
        }
    }
}
