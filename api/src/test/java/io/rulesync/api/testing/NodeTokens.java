package io.rulesync.api.testing;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSSigner;
import com.nimbusds.jose.crypto.ECDSASigner;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.ECKeyGenerator;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * A Kubernetes cluster's ServiceAccount token issuer, as a test plays it: a signing key (ES256, or RS256 as Kubernetes
 * signs by default), its JWKS (what the API server
 * serves at {@code /openid/v1/jwks}), and tokens shaped as the kubelet's projected ones for a pod on a node (Kubernetes
 * 1.30+: the node in {@code kubernetes.io.node}).
 */
public final class NodeTokens {
    private final String issuer;
    private final JWK key;
    private final JWSAlgorithm algorithm;
    private final JWSSigner signer;

    private NodeTokens(String issuer, JWK key, JWSAlgorithm algorithm, JWSSigner signer) {
        this.issuer = issuer;
        this.key = key;
        this.algorithm = algorithm;
        this.signer = signer;
    }

    /** An issuer signing with ES256. */
    public static NodeTokens es256(String issuer) {
        try {
            ECKey key = new ECKeyGenerator(Curve.P_256)
                    .keyID(UUID.randomUUID().toString())
                    .generate();
            return new NodeTokens(issuer, key, JWSAlgorithm.ES256, new ECDSASigner(key));
        } catch (JOSEException e) {
            throw new IllegalStateException(e);
        }
    }

    /** An issuer signing as Kubernetes does by default: RS256 with a 2,048-bit key. */
    public static NodeTokens rs256(String issuer) {
        try {
            RSAKey key = new RSAKeyGenerator(2048)
                    .keyID(UUID.randomUUID().toString())
                    .generate();
            return new NodeTokens(issuer, key, JWSAlgorithm.RS256, new RSASSASigner(key));
        } catch (JOSEException e) {
            throw new IllegalStateException(e);
        }
    }

    public String issuer() {
        return issuer;
    }

    /** Writes the public keys as a JWKS file. */
    public Path writeJwks(Path file) throws IOException {
        Files.writeString(file, new JWKSet(key.toPublicJWK()).toString());
        return file;
    }

    /** A token of the agents' ServiceAccount, audience rulesync, for a pod on {@code node}, valid ten minutes from now. */
    public String forNode(String node) {
        Instant now = Instant.now();
        return sign(claims(node, now, now.plus(Duration.ofMinutes(10))).build());
    }

    /** The claims of {@link #forNode}, to change one of them. */
    public JWTClaimsSet.Builder claims(String node, Instant issued, Instant expires) {
        Map<String, Object> k8s = node == null
                ? Map.of(
                        "namespace",
                        "rulesync",
                        "serviceaccount",
                        Map.of(
                                "name",
                                "rulesync-agent",
                                "uid",
                                UUID.randomUUID().toString()))
                : Map.of(
                        "namespace",
                        "rulesync",
                        "node",
                        Map.of("name", node, "uid", UUID.randomUUID().toString()),
                        "pod",
                        Map.of(
                                "name",
                                "rulesync-agent-" + node,
                                "uid",
                                UUID.randomUUID().toString()),
                        "serviceaccount",
                        Map.of(
                                "name",
                                "rulesync-agent",
                                "uid",
                                UUID.randomUUID().toString()));
        return new JWTClaimsSet.Builder()
                .issuer(issuer)
                .subject("system:serviceaccount:rulesync:rulesync-agent")
                .audience(List.of("rulesync"))
                .issueTime(Date.from(issued))
                .notBeforeTime(Date.from(issued))
                .expirationTime(Date.from(expires))
                .jwtID(UUID.randomUUID().toString())
                .claim("kubernetes.io", k8s);
    }

    public String sign(JWTClaimsSet claims) {
        try {
            SignedJWT jwt = new SignedJWT(
                    new JWSHeader.Builder(algorithm)
                            .keyID(key.getKeyID())
                            .type(JOSEObjectType.JWT)
                            .build(),
                    claims);
            jwt.sign(signer);
            return jwt.serialize();
        } catch (JOSEException e) {
            throw new IllegalStateException(e);
        }
    }
}
