package io.rulesync.agent.mode;

import java.util.Locale;
import java.util.Optional;

/**
 * The mode an agent runs in, from the mode asked for and what the node can do. Pure.
 *
 * <p>When IPVS is asked for and cannot be used, the agent never crash-loops. By configuration it
 * either programs iptables mode instead (what kube-proxy did before v1.26, and what operators asked
 * to keep) and says so in every ack, or it refuses: it applies nothing and acks every version FAILED
 * with the reason. Either way the api's node status shows the choice and the reason.
 *
 * @param note      said after the mode in acks and logs ("iptables (ipvs unavailable: ...)"); null: nothing to say
 * @param refusal   why the agent applies nothing; null: it applies
 */
public record ModeChoice(String note, String refusal) {
    /** What to do when IPVS was asked for and cannot be used. */
    public enum WhenIpvsUnavailable {
        FALLBACK,
        REFUSE;

        public String id() {
            return name().toLowerCase(Locale.ROOT);
        }

        public static WhenIpvsUnavailable parse(String id) {
            for (WhenIpvsUnavailable w : values()) {
                if (w.id().equals(id)) {
                    return w;
                }
            }
            throw new IllegalArgumentException("--ipvs-unavailable: '" + id + "' is not fallback or refuse");
        }
    }

    /** Programs what was asked, with nothing to say. */
    public static final ModeChoice AS_ASKED = new ModeChoice(null, null);

    /**
     * @param ipvsProblem why IPVS cannot be used on this node (empty: it can)
     */
    public static ModeChoice decide(ProxyMode asked, Optional<String> ipvsProblem, WhenIpvsUnavailable policy) {
        if (asked == ProxyMode.IPTABLES || ipvsProblem.isEmpty()) {
            return AS_ASKED;
        }
        String note = "ipvs unavailable: " + ipvsProblem.get();
        return policy == WhenIpvsUnavailable.FALLBACK ? new ModeChoice(note, null)
                : new ModeChoice(note, "ipvs mode was asked for and cannot be used (" + ipvsProblem.get()
                        + "); refusing to program anything else (--ipvs-unavailable=refuse)");
    }
}
