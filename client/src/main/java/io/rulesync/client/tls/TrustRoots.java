package io.rulesync.client.tls;

import io.grpc.ChannelCredentials;
import io.grpc.TlsChannelCredentials;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.Collection;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * The certificates a client trusts the api by: a CA file (PEM, one or more certificates) given with {@code --ca-file},
 * or, without one, the Java runtime's own roots. The same roots serve the REST client and the node stream.
 */
public final class TrustRoots {
    private final Path caFile;
    private final SSLContext context;

    private TrustRoots(Path caFile, SSLContext context) {
        this.caFile = caFile;
        this.context = context;
    }

    /** The runtime's roots: for an api whose certificate a public CA signed. */
    public static TrustRoots system() {
        try {
            return new TrustRoots(null, SSLContext.getDefault());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this Java runtime has no default TLS context", e);
        }
    }

    /**
     * Only the certificates of {@code caFile}.
     *
     * @throws IllegalArgumentException naming the file and what is wrong with it
     */
    public static TrustRoots of(Path caFile) {
        try (InputStream in = Files.newInputStream(caFile)) {
            Collection<? extends Certificate> certs =
                    CertificateFactory.getInstance("X.509").generateCertificates(in);
            if (certs.isEmpty()) {
                throw new IllegalArgumentException(caFile + ": holds no certificate");
            }
            KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
            store.load(null, null);
            int i = 0;
            for (Certificate c : certs) {
                store.setCertificateEntry("ca-" + i++, c);
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(store);
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, tmf.getTrustManagers(), null);
            return new TrustRoots(caFile, context);
        } catch (IOException e) {
            throw new IllegalArgumentException(caFile + ": " + e.getMessage(), e);
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException(caFile + ": not PEM certificates (" + e.getMessage() + ")", e);
        }
    }

    /** For the REST client ({@code HttpClient.Builder.sslContext}). */
    public SSLContext sslContext() {
        return context;
    }

    /** For the node stream's channel. */
    public ChannelCredentials channelCredentials() {
        if (caFile == null) {
            return TlsChannelCredentials.create();
        }
        try {
            return TlsChannelCredentials.newBuilder()
                    .trustManager(caFile.toFile())
                    .build();
        } catch (IOException e) {
            throw new IllegalArgumentException(caFile + ": " + e.getMessage(), e);
        }
    }

    @Override
    public String toString() {
        return caFile == null ? "the runtime's CA roots" : caFile.toString();
    }
}
