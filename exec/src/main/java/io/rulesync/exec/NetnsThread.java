package io.rulesync.exec;

import com.sun.jna.Library;
import com.sun.jna.Native;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * One thread that entered a network namespace ({@code setns} moves only the calling thread), for native calls that
 * must reach that namespace's kernel (a netlink socket, a libnftables context) while the process's other threads stay
 * where they are. Its calls run one at a time, in order.
 */
public final class NetnsThread implements AutoCloseable {
    interface LibC extends Library {
        int open(String path, int flags);

        int setns(int fd, int nstype);

        int close(int fd);
    }

    private static final int CLONE_NEWNET = 0x40000000;

    private final ExecutorService thread;

    /**
     * A thread in network namespace {@code netns} (one of {@code ip netns}), or in the process's own when null.
     *
     * @throws IllegalStateException when the namespace cannot be entered
     */
    public NetnsThread(String name, String netns) {
        thread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        });
        if (netns != null) {
            try {
                call(() -> {
                    LibC libc = Native.load("c", LibC.class);
                    int fd = libc.open("/var/run/netns/" + netns, 0);
                    if (fd < 0 || libc.setns(fd, CLONE_NEWNET) != 0) {
                        throw new IllegalStateException("cannot enter network namespace " + netns);
                    }
                    libc.close(fd);
                    return null;
                });
            } catch (LinkageError | RuntimeException e) {
                thread.shutdown();
                throw e;
            }
        }
    }

    /** Runs {@code call} on the thread and returns its result; what it throws is thrown here. */
    public <T> T call(Callable<T> call) {
        try {
            return thread.submit(call).get();
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof RuntimeException r) {
                throw r;
            }
            if (c instanceof Error err) {
                throw err;
            }
            throw new IllegalStateException(c);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted");
        }
    }

    @Override
    public void close() {
        thread.shutdown();
    }
}
