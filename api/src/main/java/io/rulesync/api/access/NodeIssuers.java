package io.rulesync.api.access;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.source.ImmutableJWKSet;
import com.nimbusds.jose.proc.BadJOSEException;
import com.nimbusds.jose.proc.JWSVerificationKeySelector;
import com.nimbusds.jose.proc.SecurityContext;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import com.nimbusds.jwt.proc.DefaultJWTClaimsVerifier;
import com.nimbusds.jwt.proc.DefaultJWTProcessor;
import io.rulesync.model.cluster.KubernetesNames;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.ParseException;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The clusters whose nodes prove who they are with a Kubernetes projected ServiceAccount token: for each cluster, its
 * issuer, the public keys it signs with (a JWKS, as the API server serves at {@code /openid/v1/jwks}) and the
 * ServiceAccount the agents run as. A token is verified offline: signature by one of the cluster's keys, issuer, audience
 * {@value #AUDIENCE}, expiry (by the api's clock), subject, and the node it was issued on, which Kubernetes (1.30 and
 * later) writes into the token's {@code kubernetes.io.node} claim. That node is who the token speaks for.
 *
 * <p>Read from a file of lines {@code CLUSTER ISSUER JWKS-FILE [NAMESPACE:SERVICEACCOUNT]} ({@code #} starts a comment;
 * a relative JWKS path is read beside the file). The default ServiceAccount is {@value #DEFAULT_ACCOUNT}, the one
 * {@code deploy/node-agent.yaml} runs the agents as.
 */
public final class NodeIssuers {
    public static final String AUDIENCE = "rulesync";
    public static final String DEFAULT_ACCOUNT = "rulesync:rulesync-agent";
    /** How far the api's clock and the issuer's may differ (as Kubernetes' own token authenticator allows). */
    private static final long SKEW_SECONDS = 60;

    private static final Set<JWSAlgorithm> ALGORITHMS = Set.of(
            JWSAlgorithm.RS256,
            JWSAlgorithm.RS384,
            JWSAlgorithm.RS512,
            JWSAlgorithm.ES256,
            JWSAlgorithm.ES384,
            JWSAlgorithm.ES512,
            JWSAlgorithm.PS256);

    /** One cluster's trust: tokens of {@code issuer} signed by {@code keys}, for {@code account}. */
    record Issuer(String cluster, String issuer, String account, DefaultJWTProcessor<SecurityContext> processor) {}

    /** What verifying a token found: the caller, or why not (for the log; the client is told only "not valid"). */
    public record Verified(ApiTokens.Caller caller, String failure) {}

    public static final NodeIssuers NONE = new NodeIssuers(List.of(), List.of());

    private final List<Issuer> issuers;
    private final List<Path> files;

    private NodeIssuers(List<Issuer> issuers, List<Path> files) {
        this.issuers = List.copyOf(issuers);
        this.files = List.copyOf(files);
    }

    /**
     * Reads the issuers file and each JWKS it names.
     *
     * @throws IllegalArgumentException naming the file, the line and what is wrong
     */
    public static NodeIssuers read(Path file) throws IOException {
        List<Issuer> issuers = new ArrayList<>();
        List<Path> files = new ArrayList<>(List.of(file));
        Set<String> clusters = new HashSet<>();
        int n = 0;
        for (String raw : Files.readAllLines(file)) {
            n++;
            String line = raw.strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String where = file + " line " + n;
            String[] f = line.split("\\s+");
            if (f.length < 3 || f.length > 4) {
                throw new IllegalArgumentException(
                        where + ": expected 'CLUSTER ISSUER JWKS-FILE [NAMESPACE:SERVICEACCOUNT]'");
            }
            String bad = KubernetesNames.checkNamespace(f[0]);
            if (bad != null) {
                throw new IllegalArgumentException(
                        where + ": cluster '" + KubernetesNames.printable(f[0]) + "': " + bad);
            }
            if (!clusters.add(f[0])) {
                throw new IllegalArgumentException(where + ": cluster '" + f[0] + "' is configured twice");
            }
            String account = f.length == 4 ? f[3] : DEFAULT_ACCOUNT;
            if (!account.matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?:[a-z0-9]([-.a-z0-9]*[a-z0-9])?")) {
                throw new IllegalArgumentException(
                        where + ": '" + KubernetesNames.printable(account) + "' is not NAMESPACE:SERVICEACCOUNT");
            }
            Path jwks = file.toAbsolutePath().getParent().resolve(f[2]);
            files.add(jwks);
            JWKSet keys;
            try {
                keys = JWKSet.parse(Files.readString(jwks));
            } catch (ParseException e) {
                throw new IllegalArgumentException(where + ": " + jwks + " is not a JWKS: " + e.getMessage());
            }
            if (keys.getKeys().isEmpty()) {
                throw new IllegalArgumentException(where + ": " + jwks + " holds no keys");
            }
            issuers.add(new Issuer(f[0], f[1], account, processor(f[1], account, keys)));
        }
        return new NodeIssuers(issuers, files);
    }

    private static DefaultJWTProcessor<SecurityContext> processor(String issuer, String account, JWKSet keys) {
        DefaultJWTProcessor<SecurityContext> p = new DefaultJWTProcessor<>();
        p.setJWSKeySelector(new JWSVerificationKeySelector<>(ALGORITHMS, new ImmutableJWKSet<>(keys)));
        String subject = "system:serviceaccount:" + account;
        DefaultJWTClaimsVerifier<SecurityContext> claims = new DefaultJWTClaimsVerifier<>(
                AUDIENCE,
                new JWTClaimsSet.Builder().issuer(issuer).subject(subject).build(),
                Set.of("exp", "kubernetes.io"));
        claims.setMaxClockSkew((int) SKEW_SECONDS);
        p.setJWTClaimsSetVerifier(claims);
        return p;
    }

    /** The files read, so that a change to any of them is noticed. */
    public List<Path> files() {
        return files;
    }

    /** How many clusters' issuers are configured. */
    public int size() {
        return issuers.size();
    }

    public boolean isEmpty() {
        return issuers.isEmpty();
    }

    /** Whether this looks like a JWT rather than an api token: three base64url parts, a JSON header. */
    public static boolean looksLikeJwt(String bearer) {
        return bearer.startsWith("eyJ") && bearer.chars().filter(c -> c == '.').count() == 2;
    }

    /** Verifies a node's token by the api's {@code clock}. */
    public Verified verify(String token, Clock clock) {
        SignedJWT jwt;
        String iss;
        try {
            jwt = SignedJWT.parse(token);
            iss = jwt.getJWTClaimsSet().getIssuer();
        } catch (ParseException e) {
            return new Verified(null, "not a signed JWT");
        }
        String failure = "no cluster trusts issuer '" + KubernetesNames.printable(String.valueOf(iss)) + "'";
        for (Issuer i : issuers) {
            if (!i.issuer().equals(iss)) {
                continue;
            }
            JWTClaimsSet claims;
            try {
                // The processor checks expiry against its own clock; the claims are checked again below against the
                // api's.
                claims = i.processor().process(jwt, null);
            } catch (BadJOSEException | JOSEException e) {
                // Several clusters may use the same issuer name (Kubernetes' default); each has its own keys.
                failure = "cluster '" + i.cluster() + "': " + e.getMessage();
                continue;
            }
            return node(i, claims, clock);
        }
        return new Verified(null, failure);
    }

    private static Verified node(Issuer i, JWTClaimsSet claims, Clock clock) {
        Instant now = clock.instant();
        Date exp = claims.getExpirationTime();
        if (exp.toInstant().plusSeconds(SKEW_SECONDS).isBefore(now)) {
            return new Verified(null, "cluster '" + i.cluster() + "': the token expired at " + exp.toInstant());
        }
        Date nbf = claims.getNotBeforeTime();
        if (nbf != null && nbf.toInstant().minusSeconds(SKEW_SECONDS).isAfter(now)) {
            return new Verified(
                    null, "cluster '" + i.cluster() + "': the token is not valid before " + nbf.toInstant());
        }
        Object k8s = claims.getClaim("kubernetes.io");
        Object nodeClaim = k8s instanceof Map<?, ?> m ? m.get("node") : null;
        Object name = nodeClaim instanceof Map<?, ?> m ? m.get("name") : null;
        if (!(name instanceof String node)) {
            return new Verified(
                    null,
                    "cluster '" + i.cluster() + "': the token names no node (kubernetes.io.node.name): it is "
                            + "not a token bound to a pod on a node (Kubernetes 1.30 or later)");
        }
        String bad = KubernetesNames.checkSubdomain(node);
        if (bad != null) {
            return new Verified(null, "cluster '" + i.cluster() + "': kubernetes.io.node.name: " + bad);
        }
        ApiTokens.Scope scope = new ApiTokens.Scope(i.cluster(), node);
        return new Verified(
                new ApiTokens.Caller("node " + node + " of " + i.cluster(), Role.AGENT, scope, exp.toInstant()), null);
    }
}
