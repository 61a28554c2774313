package io.rulesync.agent.nftables;

import io.rulesync.agent.plan.nftables.KernelTable;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.nftables.NftTransaction;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A dry run's tables: each apply writes the node's whole table ({@code NODE-FAMILY.nft}, an {@code nft -f} input) and
 * the transactions it would have run ({@code NODE-FAMILY.nft-last}) into a directory. Nothing can drift.
 */
public final class NftFiles implements NftKernel {
    private final Path dir;
    private final String prefix;

    public NftFiles(Path dir, String node) {
        this.dir = dir;
        this.prefix = node;
    }

    @Override
    public String run(IpFamily family, List<Step> transactions, NftTransaction table) {
        try {
            Files.createDirectories(dir);
            Path name = dir.resolve(prefix + "-" + family.id() + ".nft");
            Files.writeString(
                    dir.resolve(name.getFileName() + "-last"),
                    String.join("", transactions.stream().map(Step::text).toList()));
            Files.writeString(name, table.render());
            return null;
        } catch (IOException e) {
            return "dry run: " + e.getMessage();
        }
    }

    @Override
    public boolean readable() {
        return false;
    }

    @Override
    public Optional<KernelTable> table(IpFamily family) {
        return Optional.empty();
    }

    @Override
    public Map<String, List<String>> chains(IpFamily family, Collection<String> names) {
        return Map.of();
    }
}
