package io.rulesync.agent.apply;

import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.rules.Table;
import java.util.List;
import java.util.Optional;

/**
 * One IP family's packet filter as the agent sees it: atomic restores, and reads of single chains
 * (never of a whole table: a whole-table save crashes iptables-nft at 10k Services).
 */
public interface Netfilter {
    IpFamily family();

    /** What this backend is, for acks and logs: {@code iptables} or {@code dry-run}. */
    String mode();

    /** Applies {@code iptables-restore --noflush} input atomically: all of it, or nothing. */
    void restore(String script) throws RestoreFailedException;

    /**
     * The chain as {@code iptables -S CHAIN} prints it ({@code -N CHAIN}, then {@code -A CHAIN ...}
     * lines; built-in chains start with {@code -P}); empty when the chain does not exist.
     */
    Optional<List<String>> chain(Table table, String chain);

    /** The names of the user-defined chains of a table. */
    List<String> chainNames(Table table);

    /** How {@link #chain} prints a rule written as {@code -A chain rule}. */
    String printed(Table table, String chain, String rule);
}
