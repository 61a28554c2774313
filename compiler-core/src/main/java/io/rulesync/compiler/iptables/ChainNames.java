package io.rulesync.compiler.iptables;

import io.rulesync.model.cluster.ServicePortName;
import io.rulesync.model.rules.ServiceChain;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * kube-proxy's chain hashes: the first 16 characters of base32(sha256(...)), put behind a prefix by
 * {@link ServiceChain}, which owns what such a name looks like. The same 16-character hash of
 * {@code "ns/svc:port" + "tcp"} names a port's SVC, SVL, EXT and FW chains; an endpoint's SEP chain
 * hashes {@code "ns/svc:port" + "tcp" + "10.0.0.1:80"}. Operators' tooling knows these names, so they
 * must match byte for byte.
 */
public final class ChainNames {
    private static final char[] BASE32 = ServiceChain.HASH_ALPHABET.toCharArray();
    // MessageDigest is not thread-safe; one per thread keeps hashing allocation-free.
    private static final ThreadLocal<MessageDigest> SHA256 = ThreadLocal.withInitial(() -> {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK always has SHA-256", e);
        }
    });

    private ChainNames() {}

    /** The 16-character hash shared by a service port's SVC/SVL/EXT/FW chains. */
    public static String portHash(ServicePortName port) {
        return hash16(port.toString() + port.protocol().lower());
    }

    /** KUBE-SEP-… for one endpoint ({@code ip:port} or {@code [ip]:port}) of a service port. */
    public static String endpointChain(ServicePortName port, String endpoint) {
        return ServiceChain.SEP.named(hash16(port.toString() + port.protocol().lower() + endpoint));
    }

    /** base32 (RFC 4648 alphabet) of sha256, first 16 characters: exactly the first 10 bytes. */
    static String hash16(String input) {
        MessageDigest md = SHA256.get();
        byte[] d = md.digest(input.getBytes(StandardCharsets.UTF_8));
        char[] out = new char[ServiceChain.HASH_LENGTH];
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
