package io.rulesync.e2e;

import io.rulesync.api.access.ApiTokens;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.HexFormat;
import java.util.List;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Every node's own agent token, as the api requires of whoever acks or streams for a node: derived from one random
 * secret (HMAC-SHA256 of {@code cluster/node}), so that a fleet of simulated nodes in another process can make each
 * node's token from the secret alone, and the api's tokens file lists each node's hash.
 */
public final class AgentTokens {
    private final byte[] secret;

    private AgentTokens(byte[] secret) {
        this.secret = secret.clone();
    }

    /** A new secret. */
    public static AgentTokens random() {
        byte[] s = new byte[32];
        new SecureRandom().nextBytes(s);
        return new AgentTokens(s);
    }

    /** The secret as {@link #secret()} gave it (another process's side). */
    public static AgentTokens of(String secret) {
        return new AgentTokens(HexFormat.of().parseHex(secret));
    }

    public String secret() {
        return HexFormat.of().formatHex(secret);
    }

    /** The token of {@code node} of {@code cluster}. */
    public String token(String cluster, String node) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            byte[] t = mac.doFinal((cluster + "/" + node).getBytes(StandardCharsets.UTF_8));
            return "rs_" + Base64.getUrlEncoder().withoutPadding().encodeToString(t);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The api's token line of {@code node}: bound to it. */
    public String line(String cluster, String node) {
        return "node-" + node + "@" + cluster + " agent sha256:" + ApiTokens.hash(token(cluster, node)) + " cluster="
                + cluster + " node=" + node;
    }

    /** The lines of these nodes of {@code cluster}. */
    public List<String> lines(String cluster, Collection<String> nodes) {
        List<String> out = new ArrayList<>();
        nodes.forEach(n -> out.add(line(cluster, n)));
        return out;
    }
}
