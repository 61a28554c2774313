package io.rulesync.api.notify;

import io.rulesync.model.event.Json;
import io.rulesync.store.NotificationStore.Notification;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * What a webhook receives for one notification: a JSON body whose {@code text} a chat receiver (Slack's incoming
 * webhooks, Mattermost) shows as it is, and whose other fields a program reads; and its signature.
 */
public final class WebhookMessage {
    /** The header carrying {@code t=SECONDS,v1=HEX}: HMAC-SHA256 of {@code SECONDS.BODY} with the shared secret. */
    public static final String SIGNATURE = "X-Rulesync-Signature";
    /** The notification's id: a receiver told twice (a retry after a lost answer) sees the same id. */
    public static final String DELIVERY = "X-Rulesync-Delivery";

    private WebhookMessage() {}

    /** The body: the notification's fields, and one line of text for people. */
    public static String body(Notification n) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("text", text(n));
        m.put("id", n.id());
        m.put("kind", n.kind());
        m.put("cluster", n.cluster());
        if (n.version() != null) {
            m.put("version", n.version());
        }
        if (n.node() != null) {
            m.put("node", n.node());
        }
        m.put("detail", n.detail());
        m.put("at", n.at().toString());
        return Json.write(m);
    }

    /** {@code rulesync: shop version 12: rollout halted: wave canary: 2 of 3 nodes failed}. */
    static String text(Notification n) {
        String what = switch (n.kind()) {
            case "rollout.started" -> "rollout started";
            case "rollout.halted" -> "rollout halted";
            case "rollout.rolled-back" -> "rollout rolled back";
            case "rollout.completed" -> "rollout completed";
            case "node.failed" -> "node " + n.node() + " failed to apply";
            case "objects.refused" -> "objects refused";
            default -> n.kind();
        };
        return "rulesync: " + n.cluster() + (n.version() == null ? "" : " version " + n.version()) + ": " + what + ": "
                + n.detail();
    }

    /** The signature header's value for {@code body} sent at {@code epochSeconds}. */
    public static String signature(byte[] secret, long epochSeconds, String body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            byte[] digest = mac.doFinal((epochSeconds + "." + body).getBytes(StandardCharsets.UTF_8));
            return "t=" + epochSeconds + ",v1=" + HexFormat.of().formatHex(digest);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every JDK", e);
        }
    }
}
