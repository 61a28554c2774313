package io.rulesync.agent.ipvs;

import io.rulesync.agent.apply.Applier;
import io.rulesync.agent.apply.KubeJumps;
import io.rulesync.agent.apply.Leftovers;
import io.rulesync.agent.apply.Netfilter;
import io.rulesync.agent.apply.RestoreFailedException;
import io.rulesync.agent.plan.ipvs.Draining;
import io.rulesync.agent.plan.ipvs.IpsetPlan;
import io.rulesync.agent.plan.ipvs.IpvsPlan;
import io.rulesync.agent.plan.ipvs.KernelVirtualServer;
import io.rulesync.agent.plan.ipvs.ServiceId;
import io.rulesync.agent.rules.IpvsRuleCheck;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.iptables.RejectedRuleException;
import io.rulesync.model.ipvs.IpvsRules;
import io.rulesync.model.ipvs.VirtualServer;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings a node's kernel to an IPVS configuration, per family, in the order the parts depend on each
 * other: the ipsets (the iptables rules match them), the iptables rules and their jumps, the virtual
 * and real servers as a diff against what the kernel holds (never a flush, so live connections
 * survive; removed TCP real servers drain), then the addresses on {@code kube-ipvs0}.
 *
 * <p>A check ({@code fromKernel}) compares every step with the kernel, so it repairs drift, and a
 * step that failed is simply done again. A new version compares the ipsets with the version applied
 * before instead (reading 58,000 members back costs ~0.7 s at 10,000 Services), and reads only the
 * virtual servers that changed since then from the kernel (their listing carries the connection
 * counts draining needs). There is no rollback as in iptables mode: IPVS has no atomic swap of a whole table, so a
 * failed apply leaves some steps done, the ack says FAILED, and the next apply or check finishes it.
 */
public final class IpvsApplier {
    private static final Logger log = LoggerFactory.getLogger(IpvsApplier.class);

    private final Map<IpFamily, Netfilter> netfilters;
    private final IpvsKernel kernel;
    private final IpsetSync ipsets;
    private final BoundAddresses addresses;
    private final Duration drainTimeout;
    private final List<Cidr> excluded;
    // Read by the metrics thread; written only by the agent loop.
    private volatile Draining draining = Draining.none();
    private Map<IpFamily, IpvsRules> last = Map.of();

    /** @param excluded virtual servers in these ranges are someone else's: never deleted (kube-proxy's --ipvs-exclude-cidrs) */
    public IpvsApplier(
            List<Netfilter> netfilters,
            IpvsKernel kernel,
            IpsetSync ipsets,
            BoundAddresses addresses,
            Duration drainTimeout,
            List<Cidr> excluded) {
        Map<IpFamily, Netfilter> m = new EnumMap<>(IpFamily.class);
        netfilters.forEach(n -> m.put(n.family(), n));
        this.netfilters = m;
        this.kernel = Objects.requireNonNull(kernel, "kernel");
        this.ipsets = Objects.requireNonNull(ipsets, "ipsets");
        this.addresses = Objects.requireNonNull(addresses, "addresses");
        this.drainTimeout = Objects.requireNonNull(drainTimeout, "drainTimeout");
        this.excluded = List.copyOf(excluded);
    }

    /** What acks report. */
    public String mode() {
        return "ipvs";
    }

    public List<IpFamily> families() {
        return List.copyOf(netfilters.keySet());
    }

    /** Real servers drained (weight 0) and not yet deleted. */
    public int draining() {
        return draining.size();
    }

    /**
     * What an apply changed: sets replaced, IPVS commands run, addresses bound or unbound. All zero
     * when the kernel already held the configuration (only the small iptables chains are rewritten
     * every time). {@code error} is null when it succeeded.
     */
    public record Outcome(String error, int setsChanged, int ipvsCommands, int addressesChanged) {
        public boolean ok() {
            return error == null;
        }

        public int changes() {
            return setsChanged + ipvsCommands + addressesChanged;
        }
    }

    /**
     * Checks every family's rules first, so that nothing of a configuration that is refused reaches the kernel.
     *
     * @param fromKernel compare the ipsets with the kernel rather than with the configuration applied last
     */
    public Outcome apply(Map<IpFamily, IpvsRules> target, Instant now, boolean fromKernel) {
        for (IpvsRules r : target.values()) {
            try {
                IpvsRuleCheck.check(r);
            } catch (RejectedRuleException e) {
                return new Outcome("refused " + r.family().id() + " IPVS rules: " + e.getMessage(), 0, 0, 0);
            }
            Optional<String> refused = IpvsRuleCheck.addressRefusal(r);
            if (refused.isPresent()) {
                return new Outcome("refused " + r.family().id() + " IPVS configuration: " + refused.get(), 0, 0, 0);
            }
        }
        // kube-proxy's IPVS settings are the kernel's, not a family's: set once, at every apply that reads the kernel.
        boolean full = netfilters.keySet().stream()
                .anyMatch(f -> target.containsKey(f) && (fromKernel || last.get(f) == null));
        if (full) {
            try {
                kernel.prepare();
            } catch (IpvsApplyException ex) {
                last = Map.of();
                return new Outcome("IPVS settings: " + ex.getMessage(), 0, 0, 0);
            }
        }
        int sets = 0;
        int commands = 0;
        int bound = 0;
        for (Map.Entry<IpFamily, Netfilter> e : netfilters.entrySet()) {
            IpvsRules rules = target.get(e.getKey());
            if (rules == null) {
                continue;
            }
            String step = "ipsets";
            try {
                IpvsRules before = fromKernel ? null : last.get(e.getKey());
                IpsetPlan p = before == null ? ipsets.sync(rules) : ipsets.update(before, rules);
                sets += p.created().size()
                        + p.swapped().size()
                        + p.recreated().size()
                        + p.patched().size();
                step = "iptables";
                // The ~30 rules change only when a set empties or fills; jumps and leftovers are the check's business.
                if (before == null
                        || !before.natRules().equals(rules.natRules())
                        || !before.filterRules().equals(rules.filterRules())) {
                    e.getValue().restore(rules.iptablesRestore());
                }
                if (before == null) {
                    Applier.ensureJumps(e.getValue(), KubeJumps.ipvs());
                    int left = Leftovers.leaveIptablesMode(e.getValue());
                    if (left > 0) {
                        log.info(
                                "{}: removed {} chains and jumps iptables mode had left",
                                e.getKey().id(),
                                left);
                    }
                }
                step = "virtual servers";
                commands += servers(before, rules, now);
                step = "addresses on " + BoundAddresses.DEVICE;
                BoundAddresses.Diff d = before == null
                        ? addresses.sync(rules.family(), rules.bound())
                        : addresses.update(rules.family(), before.bound(), rules.bound());
                bound += d.add().size() + d.remove().size();
            } catch (IpvsApplyException | RestoreFailedException | IllegalArgumentException ex) {
                last = Map.of(); // the kernel holds neither the old nor the new: the next apply reads it
                return new Outcome(e.getKey().id() + " " + step + ": " + ex.getMessage(), sets, commands, bound);
            }
        }
        last = Map.copyOf(target);
        return new Outcome(null, sets, commands, bound);
    }

    /** Plans and runs the virtual servers: all of them against the kernel, or only those that changed since {@code before}. */
    private int servers(IpvsRules before, IpvsRules rules, Instant now) throws IpvsApplyException {
        IpvsPlan plan;
        if (before == null) {
            plan = IpvsPlan.plan(
                    rules.family(), rules.virtualServers(), ours(kernel.list(), rules), draining, now, drainTimeout);
            draining = draining.after(plan.draining(), id -> id.address().family() == rules.family());
        } else {
            Map<ServiceId, VirtualServer> was = byId(before.virtualServers());
            Map<ServiceId, VirtualServer> after = byId(rules.virtualServers());
            Set<ServiceId> changed = new HashSet<>();
            was.forEach((id, vs) -> {
                if (!vs.equals(after.get(id))) {
                    changed.add(id);
                }
            });
            after.forEach((id, vs) -> {
                if (!vs.equals(was.get(id))) {
                    changed.add(id);
                }
            });
            if (changed.isEmpty()) {
                return 0;
            }
            List<VirtualServer> desired = rules.virtualServers().stream()
                    .filter(vs -> changed.contains(ServiceId.of(vs)))
                    .toList();
            plan = IpvsPlan.plan(rules.family(), desired, kernel.list(changed), draining, now, drainTimeout);
            draining = draining.after(plan.draining(), changed::contains);
        }
        if (!plan.isEmpty()) {
            kernel.run(plan.commands());
        }
        return plan.commands().size();
    }

    /** The listing without the virtual servers in excluded ranges that are not ours: the plan would delete them. */
    private List<KernelVirtualServer> ours(List<KernelVirtualServer> listing, IpvsRules rules) {
        if (excluded.isEmpty()) {
            return listing;
        }
        Set<ServiceId> desired = byId(rules.virtualServers()).keySet();
        return listing.stream()
                .filter(k -> desired.contains(k.service())
                        || excluded.stream()
                                .noneMatch(c -> c.contains(k.service().address())))
                .toList();
    }

    private static Map<ServiceId, VirtualServer> byId(List<VirtualServer> servers) {
        Map<ServiceId, VirtualServer> out = new HashMap<>();
        servers.forEach(vs -> out.put(ServiceId.of(vs), vs));
        return out;
    }

    /**
     * Deletes the draining real servers whose connections are gone or whose deadline passed, against
     * the configuration applied last; the rest of the kernel is left to the next apply or check.
     */
    public Outcome settle(Instant now) {
        if (draining.isEmpty()) {
            return new Outcome(null, 0, 0, 0);
        }
        int commands = 0;
        try {
            List<KernelVirtualServer> current = kernel.list();
            for (IpvsRules rules : last.values()) {
                IpvsPlan plan = IpvsPlan.plan(
                        rules.family(), rules.virtualServers(), ours(current, rules), draining, now, drainTimeout);
                if (!plan.isEmpty()) {
                    kernel.run(plan.commands());
                    commands += plan.commands().size();
                }
                draining = draining.after(plan.draining(), id -> id.address().family() == rules.family());
            }
        } catch (IpvsApplyException | IllegalArgumentException e) {
            return new Outcome("draining: " + e.getMessage(), 0, commands, 0);
        }
        return new Outcome(null, 0, commands, 0);
    }
}
