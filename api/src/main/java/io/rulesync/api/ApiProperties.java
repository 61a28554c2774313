package io.rulesync.api;

import io.rulesync.model.topic.Topics;
import java.time.Duration;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code rulesync.api.*}.
 *
 * @param cachedVersions how many whole versions the snapshot, rules and diff endpoints keep in
 *     memory (each is a cluster's rules: tens of MB at 10k Services)
 * @param tokensFile a file of api tokens, one {@code NAME ROLE sha256:HEX} per line
 * @param tokens more token lines, given directly (the demo and tests use these)
 * @param eventsTopic where rollback and resume requests go: the compiler's events topic
 * @param actionWait how long a rollback or resume request waits for the compiler's outcome before
 *     answering 202 with the audit entry to poll
 * @param actionTimeout how long an action may stay pending before it expires (the compiler's
 *     {@code rulesync.compiler.action-timeout}); a cluster's overdue action is expired when the next
 *     one is requested, so a lost request never blocks the cluster for good
 * @param fleet a fleet file whose clusters' {@code rollout:} policies are applied at start (null: none)
 * @param streamPort the port of node streams (0: any free one; default 8081)
 * @param maxStreams the most node streams this replica holds; more are refused, and their nodes try again or elsewhere
 * @param maxFallBehind how long versions may wait for a node stream that does not read them before it is ended
 * @param nodeIssuers a file naming, per cluster, the issuer and keys of its nodes' ServiceAccount tokens (null: none)
 * @param credentialsCheck how often the tokens and issuers files are read again
 * @param tlsCert the certificate chain node streams are served with (null: plain text), as the REST api's
 * @param tlsKey its key
 * @param writesPerSecond how many writes one credential may make a second before it is answered 429
 * @param failedAuthenticationsPerMinute how many failed authentications one address may have a minute before it is refused
 * @param insecureHttp whether the api was told to serve plain HTTP on a non-loopback address (shown as a metric)
 * @param webhooks URLs told about rollouts, failing nodes and refused objects (https; http to loopback only)
 * @param webhookSecretFile a file holding the secret the webhooks' bodies are signed with (null: unsigned)
 */
@ConfigurationProperties("rulesync.api")
public record ApiProperties(
        Integer cachedVersions,
        String tokensFile,
        List<String> tokens,
        String eventsTopic,
        Duration actionWait,
        Duration actionTimeout,
        String fleet,
        Integer streamPort,
        Integer maxStreams,
        Duration maxFallBehind,
        String nodeIssuers,
        Duration credentialsCheck,
        String tlsCert,
        String tlsKey,
        Integer writesPerSecond,
        Integer failedAuthenticationsPerMinute,
        boolean insecureHttp,
        List<String> webhooks,
        String webhookSecretFile) {
    public ApiProperties {
        cachedVersions = cachedVersions == null ? 4 : cachedVersions;
        tokens = tokens == null ? List.of() : List.copyOf(tokens);
        webhooks = webhooks == null ? List.of() : List.copyOf(webhooks);
        eventsTopic = eventsTopic == null ? Topics.DEFAULT.events() : eventsTopic;
        actionWait = actionWait == null ? Duration.ofSeconds(10) : actionWait;
        actionTimeout = actionTimeout == null ? Duration.ofMinutes(5) : actionTimeout;
        streamPort = streamPort == null ? 8081 : streamPort;
        maxStreams = maxStreams == null ? 20_000 : maxStreams;
        maxFallBehind = maxFallBehind == null ? Duration.ofSeconds(30) : maxFallBehind;
        // An agent writes an ack request at most every few hundred ms; an operator a rollback now and then.
        writesPerSecond = writesPerSecond == null ? 20 : writesPerSecond;
        failedAuthenticationsPerMinute = failedAuthenticationsPerMinute == null ? 60 : failedAuthenticationsPerMinute;
        credentialsCheck = credentialsCheck == null ? Duration.ofSeconds(2) : credentialsCheck;
    }
}
