package io.rulesync.process;

import java.net.InetSocketAddress;

/** Where a process serves an endpoint of its own (metrics, health): {@code HOST:PORT}, or {@code off}. */
public final class BindAddress {
    private BindAddress() {}

    /**
     * The address {@code value} names, or null for {@code off}.
     *
     * @throws IllegalArgumentException "'VALUE' is not HOST:PORT or off"
     */
    public static InetSocketAddress parse(String value) {
        if ("off".equals(value)) {
            return null;
        }
        int colon = value.lastIndexOf(':');
        try {
            int port = Integer.parseInt(value.substring(colon + 1));
            if (colon <= 0 || port < 0 || port > 65535) {
                throw new NumberFormatException();
            }
            return new InetSocketAddress(value.substring(0, colon), port);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("'" + value + "' is not HOST:PORT or off");
        }
    }
}
