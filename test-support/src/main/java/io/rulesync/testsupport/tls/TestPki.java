package io.rulesync.testsupport.tls;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A certificate authority a test makes for itself, and the certificates it issues, written as PEM files (certificate
 * chain, unencrypted PKCS#8 key) into a directory the test owns: what an api, a Kafka broker or a PostgreSQL server
 * reads in production, without a real CA. Keys are EC P-256: quick to make, and every component here accepts them.
 */
public final class TestPki {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final AtomicLong SERIAL = new AtomicLong(System.currentTimeMillis());

    /** A certificate and its key, in memory and as PEM files. */
    public record Issued(X509Certificate certificate, KeyPair keys, Path certFile, Path keyFile) {}

    private final Path dir;
    private final String name;
    private final KeyPair keys;
    private final X509Certificate certificate;
    private final Path caFile;

    private TestPki(Path dir, String name, KeyPair keys, X509Certificate certificate, Path caFile) {
        this.dir = dir;
        this.name = name;
        this.keys = keys;
        this.certificate = certificate;
        this.caFile = caFile;
    }

    /** A new self-signed CA called {@code name}; its certificate is written to {@code dir/name-ca.crt}. */
    public static TestPki create(Path dir, String name) {
        try {
            Files.createDirectories(dir);
            KeyPair keys = keyPair();
            X500Name subject = new X500Name("CN=" + name + " test CA");
            Instant now = Instant.now();
            X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(
                    subject,
                    serial(),
                    Date.from(now.minus(Duration.ofHours(1))),
                    Date.from(now.plus(Duration.ofDays(2))),
                    subject,
                    keys.getPublic());
            JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
            b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
            b.addExtension(Extension.subjectKeyIdentifier, false, ext.createSubjectKeyIdentifier(keys.getPublic()));
            X509Certificate cert = convert(b, keys);
            Path caFile = dir.resolve(name + "-ca.crt");
            Files.writeString(caFile, pem(cert));
            return new TestPki(dir, name, keys, cert, caFile);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (GeneralSecurityException | OperatorCreationException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The CA's certificate, as a PEM file: what a client is given to verify servers with. */
    public Path caFile() {
        return caFile;
    }

    public X509Certificate certificate() {
        return certificate;
    }

    /**
     * A server certificate for {@code commonName} valid for these DNS names and IP addresses, written to
     * {@code dir/commonName.crt} and {@code .key}.
     */
    public Issued server(String commonName, List<String> dnsNames, List<String> ipAddresses) {
        return issue(commonName, dnsNames, ipAddresses, KeyPurposeId.id_kp_serverAuth, Duration.ofDays(1));
    }

    /** The usual server certificate for a test: {@code localhost} and {@code 127.0.0.1}. */
    public Issued localhost(String commonName) {
        return server(commonName, List.of("localhost"), List.of("127.0.0.1"));
    }

    /** A client certificate whose subject is {@code CN=commonName}. */
    public Issued client(String commonName) {
        return issue(commonName, List.of(), List.of(), KeyPurposeId.id_kp_clientAuth, Duration.ofDays(1));
    }

    private Issued issue(
            String commonName, List<String> dnsNames, List<String> ipAddresses, KeyPurposeId purpose, Duration valid) {
        try {
            KeyPair leaf = keyPair();
            Instant now = Instant.now();
            X509v3CertificateBuilder b = new JcaX509v3CertificateBuilder(
                    certificate,
                    serial(),
                    Date.from(now.minus(Duration.ofHours(1))),
                    Date.from(now.plus(valid)),
                    new X500Name("CN=" + commonName),
                    leaf.getPublic());
            JcaX509ExtensionUtils ext = new JcaX509ExtensionUtils();
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
            b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyAgreement));
            b.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(purpose));
            b.addExtension(Extension.authorityKeyIdentifier, false, ext.createAuthorityKeyIdentifier(certificate));
            List<GeneralName> names = new ArrayList<>();
            dnsNames.forEach(n -> names.add(new GeneralName(GeneralName.dNSName, n)));
            for (String ip : ipAddresses) {
                names.add(new GeneralName(
                        GeneralName.iPAddress, InetAddress.getByName(ip).getHostAddress()));
            }
            if (!names.isEmpty()) {
                b.addExtension(
                        Extension.subjectAlternativeName, false, new GeneralNames(names.toArray(GeneralName[]::new)));
            }
            X509Certificate cert = convert(b, keys);
            Path certFile = dir.resolve(commonName + ".crt");
            Path keyFile = dir.resolve(commonName + ".key");
            Files.writeString(certFile, pem(cert));
            writeKey(keyFile, leaf);
            return new Issued(cert, leaf, certFile, keyFile);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (GeneralSecurityException | OperatorCreationException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public String toString() {
        return "TestPki[" + name + "]";
    }

    /** One certificate in PEM. */
    public static String pem(X509Certificate cert) throws IOException {
        StringWriter out = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(out)) {
            w.writeObject(cert);
        }
        return out.toString();
    }

    private static void writeKey(Path file, KeyPair keys) throws IOException {
        StringWriter out = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(out)) {
            w.writeObject(new JcaPKCS8Generator(keys.getPrivate(), null));
        }
        Files.writeString(file, out.toString());
        // PostgreSQL refuses a key file others can read; nothing else minds.
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
    }

    private static KeyPair keyPair() throws GeneralSecurityException {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"), RANDOM);
        return g.generateKeyPair();
    }

    private static BigInteger serial() {
        return BigInteger.valueOf(SERIAL.incrementAndGet());
    }

    private static X509Certificate convert(X509v3CertificateBuilder b, KeyPair signer)
            throws OperatorCreationException, GeneralSecurityException {
        ContentSigner s = new JcaContentSignerBuilder("SHA256withECDSA").build(signer.getPrivate());
        return new JcaX509CertificateConverter().getCertificate(b.build(s));
    }
}
