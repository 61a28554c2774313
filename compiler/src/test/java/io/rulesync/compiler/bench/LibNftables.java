package io.rulesync.compiler.bench;

import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.Pointer;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * libnftables (the library behind {@code nft}) called through JNA, with one context kept for every transaction: the
 * alternative to starting {@code nft -f} per transaction that {@code bench/nft-apply} measures. Its calls run on one
 * thread that has entered the lab's network namespace ({@code setns} moves only the calling thread), so the library's
 * netlink socket talks to that namespace's kernel tables.
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

    interface LibC extends Library {
        int open(String path, int flags);

        int setns(int fd, int nstype);

        int close(int fd);
    }

    private static final int CLONE_NEWNET = 0x40000000;

    private final ExecutorService thread = Executors.newSingleThreadExecutor(r -> new Thread(r, "libnftables"));
    private final Nft nft;
    private final Pointer ctx;

    /** A context in network namespace {@code ns} (one of {@code ip netns}). */
    LibNftables(String ns) throws Exception {
        nft = Native.load("nftables", Nft.class);
        LibC libc = Native.load("c", LibC.class);
        ctx = on(() -> {
            int fd = libc.open("/var/run/netns/" + ns, 0);
            if (fd < 0 || libc.setns(fd, CLONE_NEWNET) != 0) {
                throw new IllegalStateException("cannot enter network namespace " + ns);
            }
            libc.close(fd);
            Pointer c = nft.nft_ctx_new(0);
            nft.nft_ctx_buffer_output(c);
            nft.nft_ctx_buffer_error(c);
            return c;
        });
    }

    /** Runs one transaction with the kept context; throws with the library's message if it fails. */
    void run(String transaction) throws Exception {
        on(() -> {
            if (nft.nft_run_cmd_from_buffer(ctx, transaction) != 0) {
                throw new IllegalStateException("libnftables: " + nft.nft_ctx_get_error_buffer(ctx));
            }
            return null;
        });
    }

    private <T> T on(Callable<T> call) throws Exception {
        return thread.submit(call).get();
    }

    @Override
    public void close() throws Exception {
        on(() -> {
            nft.nft_ctx_free(ctx);
            return null;
        });
        thread.shutdown();
    }
}
