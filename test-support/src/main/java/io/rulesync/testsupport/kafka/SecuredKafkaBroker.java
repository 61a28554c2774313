package io.rulesync.testsupport.kafka;

import io.rulesync.testsupport.tls.TestPki;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.UserScramCredentialAlteration;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.metadata.UserScramCredentialRecord;
import org.apache.kafka.common.security.scram.ScramCredential;
import org.apache.kafka.common.security.scram.internals.ScramFormatter;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;
import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;
import org.apache.kafka.metadata.authorizer.StandardAuthorizer;
import org.apache.kafka.metadata.bootstrap.BootstrapMetadata;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.Feature;
import org.apache.kafka.server.common.MetadataVersion;

/**
 * An in-process KRaft broker secured as the deployment's (deploy/README.md): its client listener is SASL_SSL with
 * SCRAM-SHA-512 and a certificate of a {@link TestPki} CA, and KRaft's {@link StandardAuthorizer} refuses what no
 * ACL allows. Its own principal, {@value #ADMIN}, is the one super user. The broker also talks to itself over that
 * listener (transaction markers), so its SCRAM credential is in the bootstrap metadata, where production's
 * {@code kafka-storage.sh format --add-scram} puts it. The controller listener, inside this one process, is
 * SASL_PLAINTEXT with PLAIN for the same principal: no anonymous super user.
 *
 * <p>Not {@code EmbeddedKafkaKraftBroker}: it cannot add bootstrap records. Kafka's own test kit, which it wraps, can.
 */
public final class SecuredKafkaBroker implements AutoCloseable {
    public static final String ADMIN = "admin";
    private static final String LISTENER = "EXTERNAL"; // the test kit's names for its two listeners
    private static final String CONTROLLER = "CONTROLLER";
    private static final String SCRAM = "SCRAM-SHA-512";

    private final KafkaClusterTestKit cluster;
    private final String adminPassword;
    private final Path caFile;

    private SecuredKafkaBroker(KafkaClusterTestKit cluster, String adminPassword, Path caFile) {
        this.cluster = cluster;
        this.adminPassword = adminPassword;
        this.caFile = caFile;
    }

    /** Starts a one-node broker whose certificate {@code pki} issues for localhost; its files go to {@code pki}'s directory. */
    public static SecuredKafkaBroker start(TestPki pki) throws Exception {
        String password = new ScramFormatter(ScramMechanism.SCRAM_SHA_512).secureRandomString();
        TestPki.Issued cert = pki.localhost("kafka-broker");
        // The features a new production cluster starts with (as the test kit's default, but not its unstable ones).
        MetadataVersion version = MetadataVersion.latestProduction();
        Map<String, Short> features = Feature.PRODUCTION_FEATURES.stream()
                .collect(Collectors.toMap(Feature::featureName, f -> f.defaultLevel(version)));
        List<ApiMessageAndVersion> records =
                new ArrayList<>(BootstrapMetadata.fromVersions(version, features, "rulesync test")
                        .records());
        records.add(new ApiMessageAndVersion(scramRecord(ADMIN, password), (short) 0));
        TestKitNodes nodes = new TestKitNodes.Builder(BootstrapMetadata.fromRecords(records, "rulesync test"))
                .setCombined(true)
                .setNumBrokerNodes(1)
                .setNumControllerNodes(1)
                .build();

        Map<String, String> props = new HashMap<>();
        props.put("listener.security.protocol.map", LISTENER + ":SASL_SSL," + CONTROLLER + ":SASL_PLAINTEXT");
        props.put("sasl.enabled.mechanisms", SCRAM);
        props.put("sasl.mechanism.inter.broker.protocol", SCRAM);
        props.put(
                listener(LISTENER, "scram-sha-512.sasl.jaas.config"),
                jaas("scram.ScramLoginModule", ADMIN, password, ""));
        props.put(listener(CONTROLLER, "sasl.enabled.mechanisms"), "PLAIN");
        props.put("sasl.mechanism.controller.protocol", "PLAIN");
        props.put(
                listener(CONTROLLER, "plain.sasl.jaas.config"),
                jaas("plain.PlainLoginModule", ADMIN, password, " user_" + ADMIN + "=\"" + password + "\""));
        // PEM files as production mounts them: the key and its certificate in one file, the CA in another.
        Path keystore = pki.caFile().resolveSibling("kafka-broker-keystore.pem");
        Files.writeString(keystore, Files.readString(cert.keyFile()) + Files.readString(cert.certFile()));
        props.put("ssl.keystore.type", "PEM");
        props.put("ssl.keystore.location", keystore.toString());
        props.put("ssl.truststore.type", "PEM");
        props.put("ssl.truststore.location", pki.caFile().toString());
        props.put("authorizer.class.name", StandardAuthorizer.class.getName());
        props.put("super.users", "User:" + ADMIN);
        props.put("allow.everyone.if.no.acl.found", "false");
        // One broker: the internal topics (offsets, transactions) must fit on it.
        props.put("offsets.topic.replication.factor", "1");
        props.put("transaction.state.log.replication.factor", "1");
        props.put("transaction.state.log.min.isr", "1");
        props.put("transaction.state.log.num.partitions", "1");
        props.put("group.initial.rebalance.delay.ms", "0");
        props.put("auto.create.topics.enable", "false");

        KafkaClusterTestKit.Builder builder = new KafkaClusterTestKit.Builder(nodes);
        props.forEach(builder::setConfigProp);
        KafkaClusterTestKit cluster = builder.build();
        try {
            cluster.format();
            cluster.startup();
            cluster.waitForReadyBrokers();
        } catch (Exception e) {
            cluster.close();
            throw e;
        }
        return new SecuredKafkaBroker(cluster, password, pki.caFile());
    }

    private static String listener(String name, String setting) {
        return "listener.name." + name.toLowerCase() + "." + setting;
    }

    private static String jaas(String module, String user, String password, String more) {
        return "org.apache.kafka.common.security." + module + " required username=\"" + user + "\" password=\""
                + password + "\"" + more + ";";
    }

    /** A credential as {@code kafka-storage.sh format --add-scram 'SCRAM-SHA-512=[name=...,password=...]'} writes it. */
    private static UserScramCredentialRecord scramRecord(String user, String password) throws NoSuchAlgorithmException {
        ScramCredential c = new ScramFormatter(ScramMechanism.SCRAM_SHA_512).generateCredential(password, 4096);
        return new UserScramCredentialRecord()
                .setName(user)
                .setMechanism(org.apache.kafka.clients.admin.ScramMechanism.SCRAM_SHA_512.type())
                .setSalt(c.salt())
                .setStoredKey(c.storedKey())
                .setServerKey(c.serverKey())
                .setIterations(c.iterations());
    }

    /** {@code host:port} of the SASL_SSL listener. */
    public String bootstrap() {
        return cluster.bootstrapServers();
    }

    /** The CA file clients trust the broker by. */
    public Path caFile() {
        return caFile;
    }

    /** An admin client of the super user. */
    public Admin admin() {
        Map<String, Object> p = new HashMap<>(clientSettings(ADMIN, adminPassword, caFile));
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        return Admin.create(p);
    }

    /** Client settings of {@code user}, as a {@code client.properties} file would give them. */
    public static Map<String, String> clientSettings(String user, String password, Path caFile) {
        return Map.of(
                "security.protocol",
                "SASL_SSL",
                SaslConfigs.SASL_MECHANISM,
                SCRAM,
                SaslConfigs.SASL_JAAS_CONFIG,
                jaas("scram.ScramLoginModule", user, password, ""),
                "ssl.truststore.type",
                "PEM",
                "ssl.truststore.location",
                caFile.toString());
    }

    /**
     * Creates SCRAM users, as {@code kafka-configs.sh --alter --entity-type users --add-config SCRAM-SHA-512=[...]}
     * does, and waits until the broker knows them.
     */
    public void addUsers(Map<String, String> passwords) throws Exception {
        try (Admin admin = admin()) {
            List<UserScramCredentialAlteration> add = new ArrayList<>();
            passwords.forEach((user, password) -> add.add(new UserScramCredentialUpsertion(
                    user,
                    new ScramCredentialInfo(org.apache.kafka.clients.admin.ScramMechanism.SCRAM_SHA_512, 4096),
                    password)));
            admin.alterUserScramCredentials(add).all().get(30, TimeUnit.SECONDS);
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (!admin.describeUserScramCredentials()
                    .users()
                    .get(30, TimeUnit.SECONDS)
                    .containsAll(passwords.keySet())) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the broker does not know the users " + passwords.keySet());
                }
                Thread.sleep(20);
            }
        } catch (ExecutionException e) {
            throw new IllegalStateException("cannot add users " + passwords.keySet(), e.getCause());
        }
    }

    /** Creates {@code acls}, as {@code kafka-acls.sh --add} does, and waits until the broker applies them all. */
    public void addAcls(List<AclBinding> acls) throws Exception {
        try (Admin admin = admin()) {
            admin.createAcls(acls).all().get(30, TimeUnit.SECONDS);
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (!admin.describeAcls(AclBindingFilter.ANY)
                    .values()
                    .get(30, TimeUnit.SECONDS)
                    .containsAll(acls)) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the broker does not apply the ACLs " + acls);
                }
                Thread.sleep(20);
            }
        } catch (ExecutionException e) {
            throw new IllegalStateException("cannot add ACLs " + acls, e.getCause());
        }
    }

    @Override
    public void close() {
        try {
            cluster.close();
        } catch (Exception e) {
            throw new IllegalStateException("closing the broker", e);
        }
    }

    /** Writes {@code settings} as a client.properties file (Java properties, values escaped). */
    public static void writeClientFile(Path file, Map<String, String> settings) {
        StringBuilder out = new StringBuilder();
        settings.forEach((k, v) ->
                out.append(k).append('=').append(v.replace("\\", "\\\\")).append('\n'));
        try {
            Files.writeString(file, out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
