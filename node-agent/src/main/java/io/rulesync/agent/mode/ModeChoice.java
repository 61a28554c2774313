package io.rulesync.agent.mode;

import java.util.Locale;
import java.util.Optional;

/**
 * The mode an agent runs in, from the mode asked for and what the node can do. Pure.
 *
 * <p>When IPVS or nftables mode is asked for and cannot be used (no {@code ip_vs} module; an {@code nft} or kernel too
 * old), the agent never crash-loops. By configuration it either programs iptables mode instead (what kube-proxy did
 * for IPVS before v1.26, and what operators asked to keep) and says so in every ack, or it refuses: it applies nothing
 * and acks every version FAILED with the reason. Either way the api's node status shows the choice and the reason.
 *
 * @param note      said after the mode in acks and logs ("iptables (ipvs unavailable: ...)"); null: nothing to say
 * @param refusal   why the agent applies nothing; null: it applies
 */
public record ModeChoice(String note, String refusal) {
    /** What to do when the mode asked for cannot be used. */
    public enum WhenUnavailable {
        FALLBACK,
        REFUSE;

        public String id() {
            return name().toLowerCase(Locale.ROOT);
        }

        public static WhenUnavailable parse(String id) {
            for (WhenUnavailable w : values()) {
                if (w.id().equals(id)) {
                    return w;
                }
            }
            throw new IllegalArgumentException("'" + id + "' is not fallback or refuse");
        }
    }

    /** Programs what was asked, with nothing to say. */
    public static final ModeChoice AS_ASKED = new ModeChoice(null, null);

    /**
     * @param problem why the mode asked for cannot be used on this node (empty: it can)
     */
    public static ModeChoice decide(ProxyMode asked, Optional<String> problem, WhenUnavailable policy) {
        if (asked == ProxyMode.IPTABLES || problem.isEmpty()) {
            return AS_ASKED;
        }
        String note = asked.id() + " unavailable: " + problem.get();
        return policy == WhenUnavailable.FALLBACK
                ? new ModeChoice(note, null)
                : new ModeChoice(
                        note,
                        asked.id() + " mode was asked for and cannot be used (" + problem.get()
                                + "); refusing to program anything else (--mode-unavailable=refuse)");
    }
}
