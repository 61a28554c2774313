package io.rulesync.model.cluster;

/** Range checks for port numbers, shared by every object that carries one. */
public final class Ports {
    public static final int MAX_AFFINITY_TIMEOUT_SECONDS = 86_400;
    public static final int DEFAULT_AFFINITY_TIMEOUT_SECONDS = 10_800;

    private Ports() {}

    /** Returns null when {@code port} is a valid TCP/UDP/SCTP port number, else the reason. */
    public static String checkPort(long port) {
        return port >= 1 && port <= 65535 ? null : port + " is out of range (1-65535)";
    }

    static void requirePort(String field, int port) {
        String problem = checkPort(port);
        if (problem != null) {
            throw new IllegalArgumentException(field + ": " + problem);
        }
    }
}
