package io.rulesync.model.nftables;

import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.ServicePortName;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * The names kube-proxy's nftables mode gives a service port's chains and sets ({@code servicePortChainNameBase},
 * {@code servicePortEndpointChainNameBase}, {@code hashAndTruncate}): a readable base, {@code ns/svc/proto/port} or
 * {@code ns/svc/proto/port__ip/port}, behind the first 8 characters of the base32 of its SHA-256. The prefix is not
 * hashed, so a port's {@code service-}, {@code local-}, {@code external-} and {@code firewall-} chains share a hash, as do
 * an endpoint's chain and its affinity set.
 */
public final class NftNames {
    /** nftables' name limit (256) less room for a prefix: a longer name is cut and ends in "...". */
    static final int BASE_MAX = 240;

    private static final char[] BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".toCharArray();

    private NftNames() {}

    /** {@code HASH-ns/svc/proto/port}: the part after {@code service-}, {@code local-}, {@code external-}, {@code firewall-}. */
    public static String servicePort(ServicePortName p) {
        return hashAndTruncate(p.service().namespace() + "/" + p.service().name() + "/"
                + p.protocol().lower() + "/" + p.port());
    }

    /** {@code HASH-ns/svc/proto/port__ip/port}: the part after {@code endpoint-} and {@code affinity-}; IPv6 colons become dots. */
    public static String endpoint(ServicePortName p, IpAddress ip, int port) {
        return hashAndTruncate(p.service().namespace() + "/" + p.service().name() + "/"
                + p.protocol().lower() + "/" + p.port() + "__" + ip.toString().replace(':', '.') + "/" + port);
    }

    /** {@code HASH-base}, cut to {@value #BASE_MAX} characters. */
    public static String hashAndTruncate(String base) {
        String name = hash8(base) + "-" + base;
        return name.length() > BASE_MAX ? name.substring(0, BASE_MAX - 3) + "..." : name;
    }

    /** base32 (RFC 4648) of SHA-256, first 8 characters: exactly the first 5 bytes. */
    static String hash8(String input) {
        byte[] d;
        try {
            d = MessageDigest.getInstance("SHA-256").digest(input.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
        long bits = 0;
        for (int i = 0; i < 5; i++) {
            bits = (bits << 8) | (d[i] & 0xff);
        }
        char[] out = new char[8];
        for (int i = 7; i >= 0; i--) {
            out[i] = BASE32[(int) (bits & 31)];
            bits >>>= 5;
        }
        return new String(out);
    }
}
