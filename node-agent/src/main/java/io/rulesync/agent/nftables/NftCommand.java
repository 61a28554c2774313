package io.rulesync.agent.nftables;

import io.rulesync.agent.plan.nftables.KernelTable;
import io.rulesync.exec.CommandRunner;
import io.rulesync.exec.NftNetlink;
import io.rulesync.exec.ToolMessage;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.nftables.NftTransaction;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The {@code nft} tool on the node's kernel (or a lab's namespace, through the runner). Transactions go in on standard
 * input ({@code nft -f -}); reading back is {@code nft -j list}, JSON, so that nothing depends on how a version of the
 * tool prints rules. Only the {@code kube-proxy} table of {@code ip} and {@code ip6} is ever named: other tables are
 * never read or written.
 */
public final class NftCommand implements NftKernel {
    /** A full load of 10,000 Services took about 3 minutes with nft 1.0.6 on a small machine. */
    private static final Duration RUN_TIMEOUT = Duration.ofMinutes(10);

    private static final Duration READ_TIMEOUT = Duration.ofMinutes(2);
    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final CommandRunner runner;
    private final String netns;
    private final boolean useNetlink;
    private NftNetlink netlink;
    private boolean netlinkFailed;
    private int sentByNetlink;

    /** The {@code nft} tool for every transaction. */
    public NftCommand(CommandRunner runner) {
        this(runner, null, false);
    }

    /**
     * With {@code useNetlink}, transactions of chains and elements alone (a Service's chains gone, map elements of a
     * Service without endpoints) go as netlink messages, without the whole-table read {@code nft} makes first; the
     * rest, and everything should the socket not open, go to {@code nft}.
     *
     * @param netns the network namespace the runner works in ({@code ip netns}), null for the agent's own
     */
    public NftCommand(CommandRunner runner, String netns, boolean useNetlink) {
        this.runner = runner;
        this.netns = netns;
        this.useNetlink = useNetlink;
    }

    @Override
    public int sentByNetlink() {
        return sentByNetlink;
    }

    @Override
    public String run(IpFamily family, List<Step> transactions, NftTransaction table) {
        Map<String, String> setTypes = null;
        for (Step step : transactions) {
            if (step.ops() != null && netlink() != null) {
                if (setTypes == null) {
                    setTypes = NetlinkBatch.setTypes(table);
                }
                Optional<List<NftNetlink.Message>> batch = NetlinkBatch.of(family, step.ops(), setTypes);
                if (batch.isPresent()) {
                    try {
                        netlink.run(batch.get());
                        sentByNetlink++;
                        continue;
                    } catch (IllegalStateException e) {
                        return "netlink: " + e.getMessage();
                    }
                }
            }
            String t = step.text();
            try {
                CommandRunner.Result r = runner.run(List.of("nft", "-f", "-"), t, RUN_TIMEOUT);
                if (!r.ok()) {
                    return "nft -f: " + ToolMessage.of(r);
                }
            } catch (IOException e) {
                return "nft -f: " + e.getMessage();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return "nft -f: interrupted";
            }
        }
        return null;
    }

    /** The socket, opened on first use; null when netlink is not used or could not be opened (said once). */
    private NftNetlink netlink() {
        if (!useNetlink || netlinkFailed) {
            return null;
        }
        if (netlink == null) {
            try {
                netlink = new NftNetlink(netns);
            } catch (IllegalStateException e) {
                netlinkFailed = true;
                LoggerFactory.getLogger(NftCommand.class)
                        .warn("nftables: no netlink socket ({}); every transaction goes to nft", e.getMessage());
                return null;
            }
        }
        return netlink;
    }

    /**
     * Deletes the {@code kube-proxy} tables of these families, if any: what nftables mode leaves when a node changes to
     * another mode. Nothing when {@code nft} is not installed (then there is no such table to speak of).
     *
     * @return how many tables were deleted
     */
    public static int deleteTables(CommandRunner runner, List<IpFamily> families) {
        int n = 0;
        for (IpFamily f : families) {
            try {
                String family = NftTransaction.familyName(f);
                CommandRunner.Result listed = runner.run(List.of("nft", "list", "tables", family), null, READ_TIMEOUT);
                if (listed.ok()
                        && listed.stdout().contains("table " + family + " " + NftTransaction.TABLE + "\n")
                        && runner.run(
                                        List.of("nft", "delete", "table", family, NftTransaction.TABLE),
                                        null,
                                        RUN_TIMEOUT)
                                .ok()) {
                    n++;
                }
            } catch (IOException e) {
                return n; // no nft here
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return n;
            }
        }
        return n;
    }

    @Override
    public boolean readable() {
        return true;
    }

    @Override
    public Optional<KernelTable> table(IpFamily family) throws NftReadException {
        Optional<JsonNode> listing = list("table", family, NftTransaction.TABLE);
        if (listing.isEmpty()) {
            return Optional.empty();
        }
        Map<String, List<String>> chains = new LinkedHashMap<>();
        Map<String, Integer> elements = new HashMap<>();
        for (JsonNode item : listing.get().path("nftables")) {
            JsonNode set = item.has("set") ? item.get("set") : item.get("map");
            if (item.has("chain")) {
                chains.putIfAbsent(item.get("chain").path("name").asString(), new ArrayList<>());
            } else if (item.has("rule")) {
                chains.computeIfAbsent(item.get("rule").path("chain").asString(), k -> new ArrayList<>())
                        .add(rule(item.get("rule")));
            } else if (set != null) {
                elements.put(set.path("name").asString(), set.path("elem").size());
            }
        }
        return Optional.of(new KernelTable(chains, elements));
    }

    @Override
    public Map<String, List<String>> chains(IpFamily family, Collection<String> names) throws NftReadException {
        Map<String, List<String>> out = new LinkedHashMap<>();
        for (String name : names) {
            Optional<JsonNode> listing = list("chain", family, NftTransaction.TABLE + " " + name);
            if (listing.isPresent()) {
                List<String> rules = new ArrayList<>();
                for (JsonNode item : listing.get().path("nftables")) {
                    if (item.has("rule")) {
                        rules.add(rule(item.get("rule")));
                    }
                }
                out.put(name, rules);
            }
        }
        return out;
    }

    /** A rule as the kernel lists it, without its handle (which every rewrite changes). */
    private static String rule(JsonNode rule) {
        return rule.path("expr") + (rule.has("comment") ? " comment " + rule.get("comment") : "");
    }

    /** {@code nft -j list WHAT FAMILY NAME...}; empty when the table or chain does not exist. */
    private Optional<JsonNode> list(String what, IpFamily family, String names) throws NftReadException {
        List<String> argv = new ArrayList<>(List.of("nft", "-j", "list", what, NftTransaction.familyName(family)));
        argv.addAll(List.of(names.split(" ")));
        CommandRunner.Result r;
        try {
            r = runner.run(argv, null, READ_TIMEOUT);
        } catch (IOException e) {
            throw new NftReadException("nft -j list: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new NftReadException("nft -j list: interrupted");
        }
        if (!r.ok()) {
            if (r.stderr().contains("No such file or directory")) {
                return Optional.empty();
            }
            throw new NftReadException("nft -j list " + what + ": " + ToolMessage.of(r));
        }
        try {
            return Optional.of(JSON.readTree(r.stdout()));
        } catch (JacksonException e) {
            throw new NftReadException("nft -j list " + what + ": not JSON: " + e.getOriginalMessage());
        }
    }
}
