package io.rulesync.compiler.iptables;

import io.rulesync.model.cluster.ServicePortName;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * kube-proxy's chain names: a prefix plus the first 16 characters of base32(sha256(...)). The same
 * 16-character hash of {@code "ns/svc:port" + "tcp"} names a port's SVC, SVL, EXT and FW chains; an
 * endpoint's SEP chain hashes {@code "ns/svc:port" + "tcp" + "10.0.0.1:80"}. Operators' tooling knows
 * these names, so they must match byte for byte.
 */
public final class ChainNames {
    public static final String SVC_PREFIX = "KUBE-SVC-";
    public static final String SVL_PREFIX = "KUBE-SVL-";
    public static final String EXT_PREFIX = "KUBE-EXT-";
    public static final String FW_PREFIX = "KUBE-FW-";
    public static final String SEP_PREFIX = "KUBE-SEP-";

    private static final char[] BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".toCharArray();
    // MessageDigest is not thread-safe; one per thread keeps hashing allocation-free.
    private static final ThreadLocal<MessageDigest> SHA256 = ThreadLocal.withInitial(() -> {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK always has SHA-256", e);
        }
    });

    private ChainNames() {
    }

    /** The 16-character hash shared by a service port's SVC/SVL/EXT/FW chains. */
    public static String portHash(ServicePortName port) {
        return hash16(port.toString() + port.protocol().lower());
    }

    /** KUBE-SEP-… for one endpoint ({@code ip:port} or {@code [ip]:port}) of a service port. */
    public static String endpointChain(ServicePortName port, String endpoint) {
        return SEP_PREFIX + hash16(port.toString() + port.protocol().lower() + endpoint);
    }

    /** base32 (RFC 4648 alphabet) of sha256, first 16 characters: exactly the first 10 bytes. */
    static String hash16(String input) {
        MessageDigest md = SHA256.get();
        byte[] d = md.digest(input.getBytes(StandardCharsets.UTF_8));
        char[] out = new char[16];
        int o = 0;
        for (int i = 0; i < 10; i += 5) {
            long v = 0;
            for (int k = 0; k < 5; k++) {
                v = (v << 8) | (d[i + k] & 0xff);
            }
            for (int shift = 35; shift >= 0; shift -= 5) {
                out[o++] = BASE32[(int) ((v >>> shift) & 31)];
            }
        }
        return new String(out);
    }
}
