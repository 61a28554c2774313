package io.rulesync.compiler.bench;

import io.rulesync.compiler.iptables.ProxySettings;
import io.rulesync.compiler.nftables.NftablesCompiler;
import io.rulesync.exec.NftNetlink;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.nftables.NftDelta;
import io.rulesync.model.nftables.NftTransaction;
import io.rulesync.testsupport.cluster.SyntheticCluster;
import io.rulesync.testsupport.netns.NetnsLab;
import java.util.Arrays;
import java.util.List;

/**
 * What the kernel and this host's {@code nft} cost for nftables mode at scale: a node's whole {@code kube-proxy} table
 * loaded with {@code nft -f} into a fresh network namespace, then partial transactions on it (one endpoint moved, a new
 * Service, a Service without endpoints, which is map elements only), each timed as {@code nft -f} runs it, and the first
 * two again through libnftables with one long-lived context ({@link LibNftables}), and single operations written as
 * netlink messages directly ({@link NftNetlink}), which read no cache first. Needs root
 * (a namespace of its own, deleted after) and {@code nft}.
 *
 * <p>Usage: {@code bench/nft-apply [SERVICES [ENDPOINTS [RUNS]]]} (default 10000 10 5).
 */
public final class NftApplyReport {
    private static final ProxySettings SETTINGS =
            ProxySettings.defaults(IpFamily.IPV4).withClusterCidrs(List.of(Cidr.parse("10.0.0.0/8")));

    private NftApplyReport() {}

    public static void main(String[] args) throws Exception {
        int services = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
        int endpoints = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        int runs = args.length > 2 ? Integer.parseInt(args[2]) : 5;
        ClusterState state = SyntheticCluster.build(services, endpoints);
        NftTransaction full = NftablesCompiler.compile(state, SyntheticCluster.NODE, SETTINGS);
        String text = full.render();
        System.out.printf(
                "%,d Services x %d endpoints: %,d operations, %.1f MB of nft input (%s)%n",
                services, endpoints, full.ops().size(), text.length() / 1e6, version());
        try (NetnsLab lab = new NetnsLab(1)) {
            String ns = lab.nodeNs();
            long t = System.nanoTime();
            nft(ns, text);
            System.out.printf("full load into an empty namespace: %.2f s%n", (System.nanoTime() - t) / 1e9);

            ClusterState current = state;
            double[] endpoint = new double[runs];
            double[] added = new double[runs];
            double[] elementsOnly = new double[runs];
            for (int r = 0; r < runs; r++) {
                ClusterState moved =
                        current.withEndpointSlice(SyntheticCluster.slice(r * 97 % services, endpoints, r + 1));
                endpoint[r] = apply(ns, current, moved);
                int fresh = services + 1 + 2 * r;
                ClusterState withNew = moved.withService(SyntheticCluster.service(fresh))
                        .withEndpointSlice(SyntheticCluster.slice(fresh, endpoints, 0));
                added[r] = apply(ns, moved, withNew);
                ClusterState withEmpty = withNew.withService(SyntheticCluster.service(fresh + 1));
                elementsOnly[r] = apply(ns, withNew, withEmpty);
                current = withEmpty;
            }
            // Which single operations make this nft read the table first: one of each kind, alone in its transaction.
            String someChain = "service-"
                    + io.rulesync.model.nftables.NftNames.servicePort(io.rulesync.compiler.endpoints.ServicePortInfo.of(
                                    SyntheticCluster.service(0), IpFamily.IPV4)
                            .get(0)
                            .name());
            double[] plainElement = new double[runs];
            double[] verdictElement = new double[runs];
            double[] emptyChain = new double[runs];
            double[] oneRule = new double[runs];
            for (int r = 0; r < runs; r++) {
                plainElement[r] = time(ns, "add element ip kube-proxy cluster-ips { 172.31.255." + (r + 1) + " }\n");
                verdictElement[r] = time(
                        ns,
                        "add element ip kube-proxy no-endpoint-services { 172.31.255." + (r + 1)
                                + " . tcp . 80 : drop }\n");
                emptyChain[r] = time(ns, "add chain ip kube-proxy bench-" + r + "\n");
                oneRule[r] = time(ns, "add rule ip kube-proxy " + someChain + " counter\n");
            }
            print("one element of a plain set (cluster-ips)", plainElement);
            print("one element of a verdict map, verdict drop", verdictElement);
            print("one new empty chain", emptyChain);
            print("one rule appended to an existing chain", oneRule);
            // The same single operations written as netlink messages directly, with no cache read before them.
            double[] nlElement = new double[runs];
            double[] nlVerdict = new double[runs];
            double[] nlChain = new double[runs];
            double[] nlRule = new double[runs];
            double[] nlBatch = new double[runs];
            NftNetlink.Family ip = NftNetlink.Family.IP;
            try (NftNetlink nl = new NftNetlink(ns)) {
                for (int r = 0; r < runs; r++) {
                    byte[] vip = {(byte) 172, 31, (byte) 254, (byte) (r + 1)};
                    nlElement[r] = time(nl, List.of(NftNetlink.addElement(ip, "kube-proxy", "cluster-ips", vip, null)));
                    nlVerdict[r] = time(
                            nl,
                            List.of(NftNetlink.addElement(
                                    ip,
                                    "kube-proxy",
                                    "no-endpoint-services",
                                    new NftNetlink.Key()
                                            .address(vip)
                                            .protocol(6)
                                            .port(80)
                                            .bytes(),
                                    NftNetlink.Verdict.DROP)));
                    nlChain[r] = time(nl, List.of(NftNetlink.addChain(ip, "kube-proxy", "netlink-" + r)));
                    nlRule[r] = time(nl, List.of(NftNetlink.addCounterRule(ip, "kube-proxy", someChain)));
                    // About the size of a one-endpoint move: two chains with two rules each, an element in and one out.
                    nlBatch[r] = time(
                            nl,
                            List.of(
                                    NftNetlink.addChain(ip, "kube-proxy", "netlink-a" + r),
                                    NftNetlink.addCounterRule(ip, "kube-proxy", "netlink-a" + r),
                                    NftNetlink.addCounterRule(ip, "kube-proxy", "netlink-a" + r),
                                    NftNetlink.addChain(ip, "kube-proxy", "netlink-b" + r),
                                    NftNetlink.addCounterRule(ip, "kube-proxy", "netlink-b" + r),
                                    NftNetlink.addCounterRule(ip, "kube-proxy", "netlink-b" + r),
                                    NftNetlink.addElement(
                                            ip,
                                            "kube-proxy",
                                            "cluster-ips",
                                            new byte[] {(byte) 172, 31, (byte) 253, (byte) (r + 1)},
                                            null),
                                    NftNetlink.deleteElement(ip, "kube-proxy", "cluster-ips", vip)));
                }
            }
            print("netlink, no cache: one element of a plain set", nlElement);
            print("netlink, no cache: one element of a verdict map", nlVerdict);
            print("netlink, no cache: one new empty chain", nlChain);
            print("netlink, no cache: one rule appended to an existing chain", nlRule);
            print("netlink, no cache: 2 chains, 4 rules, 2 elements in one batch", nlBatch);
            // The same changes through libnftables, one context kept for all of them (its cache could outlive a
            // transaction).
            double[] libEndpoint = new double[runs];
            double[] libAdded = new double[runs];
            try (LibNftables lib = new LibNftables(ns)) {
                for (int r = 0; r < runs; r++) {
                    ClusterState moved =
                            current.withEndpointSlice(SyntheticCluster.slice(r * 89 % services, endpoints, r + 10));
                    libEndpoint[r] = apply(lib, current, moved);
                    int fresh = services + 1000 + r;
                    ClusterState withNew = moved.withService(SyntheticCluster.service(fresh))
                            .withEndpointSlice(SyntheticCluster.slice(fresh, endpoints, 0));
                    libAdded[r] = apply(lib, moved, withNew);
                    current = withNew;
                }
            }
            print("one endpoint moved (2 chains written, 1 flushed, then deleted)", endpoint);
            print("  the same through libnftables, one context", libEndpoint);
            print("a new Service with " + endpoints + " endpoints", added);
            print("  the same through libnftables, one context", libAdded);
            print("a new Service without endpoints (2 map elements)", elementsOnly);
            t = System.nanoTime();
            lab.exec(ns, "nft", "list", "table", "ip", "kube-proxy").orThrow();
            System.out.printf("nft list table: %.2f s%n", (System.nanoTime() - t) / 1e9);
        }
    }

    /** Seconds to apply the delta from {@code a} to {@code b}: its main transaction and its cleanup, each one nft -f. */
    private static double apply(String ns, ClusterState a, ClusterState b) throws Exception {
        NftDelta d = NftDelta.between(
                NftablesCompiler.compile(a, SyntheticCluster.NODE, SETTINGS),
                NftablesCompiler.compile(b, SyntheticCluster.NODE, SETTINGS));
        long t = System.nanoTime();
        nft(ns, d.main().render());
        if (!d.cleanup().ops().isEmpty()) {
            nft(ns, d.cleanup().render());
        }
        return (System.nanoTime() - t) / 1e9;
    }

    /** {@link #apply(String, ClusterState, ClusterState)} through libnftables. */
    private static double apply(LibNftables lib, ClusterState a, ClusterState b) throws Exception {
        NftDelta d = NftDelta.between(
                NftablesCompiler.compile(a, SyntheticCluster.NODE, SETTINGS),
                NftablesCompiler.compile(b, SyntheticCluster.NODE, SETTINGS));
        long t = System.nanoTime();
        lib.run(d.main().render());
        if (!d.cleanup().ops().isEmpty()) {
            lib.run(d.cleanup().render());
        }
        return (System.nanoTime() - t) / 1e9;
    }

    private static double time(NftNetlink netlink, List<NftNetlink.Message> batch) throws Exception {
        long t = System.nanoTime();
        netlink.run(batch);
        return (System.nanoTime() - t) / 1e9;
    }

    private static double time(String ns, String input) throws Exception {
        long t = System.nanoTime();
        nft(ns, input);
        return (System.nanoTime() - t) / 1e9;
    }

    /** {@code nft -f} of {@code input} in namespace {@code ns}, waited for however long it takes (the lab's runs time out). */
    private static void nft(String ns, String input) throws Exception {
        java.nio.file.Path f = java.nio.file.Files.createTempFile("nft-apply", ".nft");
        try {
            java.nio.file.Files.writeString(f, input);
            Process p = new ProcessBuilder("ip", "netns", "exec", ns, "nft", "-f", f.toString())
                    .redirectErrorStream(true)
                    .start();
            String out = new String(p.getInputStream().readAllBytes());
            if (p.waitFor() != 0) {
                throw new IllegalStateException("nft -f failed: " + out);
            }
        } finally {
            java.nio.file.Files.deleteIfExists(f);
        }
    }

    private static void print(String what, double[] s) {
        double[] sorted = s.clone();
        Arrays.sort(sorted);
        System.out.printf(
                "%-66s median %.4f s (min %.4f, max %.4f, %d runs)%n",
                what, sorted[sorted.length / 2], sorted[0], sorted[sorted.length - 1], sorted.length);
    }

    private static String version() throws Exception {
        Process p =
                new ProcessBuilder("nft", "--version").redirectErrorStream(true).start();
        return new String(p.getInputStream().readAllBytes()).strip();
    }
}
