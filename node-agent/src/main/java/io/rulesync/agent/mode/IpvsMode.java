package io.rulesync.agent.mode;

import io.rulesync.agent.conntrack.Conntrack;
import io.rulesync.agent.ipvs.IpvsApplier;
import io.rulesync.agent.plan.NodeView;
import io.rulesync.agent.verify.DriftCheck;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.ipvs.IpvsRules;
import io.rulesync.model.rules.Unit;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * kube-proxy's IPVS mode: each version's IPVS configuration is applied, and a check applies the
 * running version again (every step compares with the kernel, so only what drifted changes).
 * Between checks, draining real servers are looked at and deleted once their connections end.
 */
public final class IpvsMode implements KernelMode {
    private static final Logger log = LoggerFactory.getLogger(IpvsMode.class);
    /** How often draining real servers are looked at between checks (kube-proxy: every minute). */
    private static final Duration SETTLE_EVERY = Duration.ofSeconds(5);

    private final String node;
    private final IpvsApplier ipvs;
    private final Conntrack conntrack;
    private final Clock clock;
    private Instant settleAt;

    public IpvsMode(String node, IpvsApplier ipvs, Conntrack conntrack, Clock clock) {
        this.node = Objects.requireNonNull(node, "node");
        this.ipvs = Objects.requireNonNull(ipvs, "ipvs");
        this.conntrack = Objects.requireNonNull(conntrack, "conntrack");
        this.clock = Objects.requireNonNull(clock, "clock");
    }

    @Override
    public String mode() {
        return ipvs.mode();
    }

    /** IPVS applies reconcile with the kernel anyway: a state file would save nothing. */
    @Override
    public boolean canResume() {
        return false;
    }

    @Override
    public boolean holds(NodeView v) {
        return false;
    }

    @Override
    public Applied apply(NodeView from, NodeView to, Set<Unit> touched) {
        Map<IpFamily, IpvsRules> target = ipvsRules(to);
        IpvsApplier.Outcome o = ipvs.apply(target, clock.instant(), false);
        if (!o.ok()) {
            return Applied.failed(o.error());
        }
        int rules = 0;
        for (IpvsRules r : target.values()) {
            rules += r.iptablesRuleCount() + r.virtualServers().size() + r.realServerCount();
        }
        if (from != null && touched != null) {
            conntrack.clearStale(node, IptablesMode.families(to, ipvs.families()), from, to, touched);
        }
        return new Applied(null, rules, o.changes() + " changes");
    }

    /** Applies the running version again, comparing every step with the kernel (and deleting real servers that finished draining). */
    @Override
    public DriftCheck.Result verify(NodeView running) {
        IpvsApplier.Outcome o = ipvs.apply(ipvsRules(running), clock.instant(), true);
        if (!o.ok()) {
            log.atWarn()
                    .addKeyValue("version", running.version())
                    .log("drift: could not reconcile IPVS mode with version {}: {}", running.version(), o.error());
            return new DriftCheck.Result(false, 0, 0, List.of(o.error()));
        }
        if (o.changes() > 0) {
            log.atWarn()
                    .addKeyValue("version", running.version())
                    .log(
                            "drift repaired ({}): {} ipsets, {} IPVS changes, {} addresses",
                            o.changes(),
                            o.setsChanged(),
                            o.ipvsCommands(),
                            o.addressesChanged());
        }
        return new DriftCheck.Result(false, 0, o.changes(), List.of());
    }

    /** Every few seconds while real servers drain: delete those whose connections ended or whose time is up. */
    @Override
    public DriftCheck.Result between(NodeView running, Instant now) {
        if (ipvs.draining() == 0 || (settleAt != null && now.isBefore(settleAt))) {
            return NOTHING;
        }
        settleAt = now.plus(SETTLE_EVERY);
        IpvsApplier.Outcome o = ipvs.settle(now);
        if (!o.ok()) {
            log.atWarn()
                    .addKeyValue("version", running.version())
                    .log("could not delete drained real servers: {}", o.error());
        } else if (o.ipvsCommands() > 0) {
            log.atInfo()
                    .addKeyValue("version", running.version())
                    .log("deleted {} drained real servers, {} still draining", o.ipvsCommands(), ipvs.draining());
        }
        return NOTHING; // deleting drained servers is no repair
    }

    @Override
    public int draining() {
        return ipvs.draining();
    }

    /** The IPVS configuration of this node in each family the kernel takes. */
    private Map<IpFamily, IpvsRules> ipvsRules(NodeView v) {
        Map<IpFamily, IpvsRules> out = new EnumMap<>(IpFamily.class);
        for (IpFamily f : IptablesMode.families(v, ipvs.families())) {
            v.rules().ipvs(node, f).ifPresent(r -> out.put(f, r));
        }
        return out;
    }
}
