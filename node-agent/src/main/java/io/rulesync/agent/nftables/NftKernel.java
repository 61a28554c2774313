package io.rulesync.agent.nftables;

import io.rulesync.agent.plan.nftables.KernelTable;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.nftables.NftTransaction;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The node's {@code kube-proxy} tables: {@link NftCommand} (the {@code nft} tool), or {@link NftFiles} (a dry run). */
public interface NftKernel {
    /** One transaction: its {@code nft -f} text, and its operations when it is made of them alone (else null). */
    record Step(String text, NftTransaction ops) {
        public static Step of(NftTransaction ops) {
            return new Step(ops.render(), ops);
        }

        public static Step text(String text) {
            return new Step(text, null);
        }
    }

    /**
     * Runs {@code transactions} in order, each one atomic.
     *
     * @param table what they leave in the family's table (a dry run writes it down)
     * @return null when all succeeded, else what went wrong, in one line
     */
    String run(IpFamily family, List<Step> transactions, NftTransaction table);

    /** Transactions sent as netlink messages rather than through {@code nft}, so far. */
    default int sentByNetlink() {
        return 0;
    }

    /** Whether the kernel can be read back; a dry run cannot. */
    boolean readable();

    /** The family's {@code kube-proxy} table as the kernel holds it; empty when there is none. */
    Optional<KernelTable> table(IpFamily family) throws NftReadException;

    /** The rules of these chains as the kernel lists them; a chain the kernel lacks is left out. */
    Map<String, List<String>> chains(IpFamily family, Collection<String> names) throws NftReadException;

    /** The kernel could not be read. */
    final class NftReadException extends Exception {
        public NftReadException(String message) {
            super(message);
        }
    }
}
