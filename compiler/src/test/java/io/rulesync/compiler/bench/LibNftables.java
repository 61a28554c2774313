package io.rulesync.compiler.bench;

import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import io.rulesync.exec.NetnsThread;

/**
 * libnftables (the library behind {@code nft}) called through JNA, with one context kept for every transaction: the
 * alternative to starting {@code nft -f} per transaction that {@code bench/nft-apply} measures. Its calls run on a
 * {@link NetnsThread} in the lab's network namespace, so the library's netlink socket talks to that namespace's tables.
 */
final class LibNftables implements AutoCloseable {
    /** The calls used; see libnftables(3). */
    interface Nft extends Library {
        Pointer nft_ctx_new(int flags);

        void nft_ctx_free(Pointer ctx);

        int nft_ctx_buffer_output(Pointer ctx);

        int nft_ctx_buffer_error(Pointer ctx);

        String nft_ctx_get_error_buffer(Pointer ctx);

        int nft_run_cmd_from_buffer(Pointer ctx, String buffer);
    }

    private final NetnsThread thread;
    private final Nft nft;
    private final Pointer ctx;

    /** A context in network namespace {@code ns} (one of {@code ip netns}). */
    LibNftables(String ns) {
        nft = Native.load("nftables", Nft.class);
        thread = new NetnsThread("libnftables", ns);
        ctx = thread.call(() -> {
            Pointer c = nft.nft_ctx_new(0);
            nft.nft_ctx_buffer_output(c);
            nft.nft_ctx_buffer_error(c);
            return c;
        });
    }

    /** Runs one transaction with the kept context; throws with the library's message if it fails. */
    void run(String transaction) {
        thread.call(() -> {
            if (nft.nft_run_cmd_from_buffer(ctx, transaction) != 0) {
                throw new IllegalStateException("libnftables: " + nft.nft_ctx_get_error_buffer(ctx));
            }
            return null;
        });
    }

    @Override
    public void close() {
        thread.call(() -> {
            nft.nft_ctx_free(ctx);
            return null;
        });
        thread.close();
    }
}
