package io.rulesync.agent.plan.ipvs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rulesync.model.cluster.IpAddress;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.ipvs.IpvsRules;
import io.rulesync.model.ipvs.IpvsSet;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The ipset restore script: missing sets created as declared, changed ones swapped, equal ones not named. */
public class IpsetPlanTest {

    /** IPVS rules with only sets (the planner reads nothing else). */
    public static IpvsRules rules(IpFamily family, Map<IpvsSet, List<String>> members) {
        Map<IpvsSet, SortedSet<String>> sets = new EnumMap<>(IpvsSet.class);
        members.forEach((s, m) -> sets.put(s, new TreeSet<>(m)));
        SortedSet<IpAddress> bound = new TreeSet<>();
        return new IpvsRules(family, bound, List.of(), sets, List.of(), List.of());
    }

    static final IpvsRules V4 = rules(
            IpFamily.IPV4,
            Map.of(
                    IpvsSet.CLUSTER_IP, List.of("10.96.0.10,tcp:53", "10.96.0.10,udp:53"),
                    IpvsSet.LOAD_BALANCER_SOURCE_CIDR,
                            List.of("203.0.113.5,tcp:80,10.1.2.3/32", "203.0.113.5,tcp:80,192.168.0.0/16"),
                    IpvsSet.NODE_PORT_TCP, List.of("30080", "8080"),
                    IpvsSet.IPVS_IPS, List.of("10.96.0.10")));

    /** V4 as ipset 7.17 saves it: hash order, header extras, a host prefix dropped. */
    static final String V4_SAVED = """
            create KUBE-LOOP-BACK hash:ip,port,ip family inet hashsize 1024 maxelem 65536 bucketsize 12 initval 0x63ba2c0e
            create KUBE-CLUSTER-IP hash:ip,port family inet hashsize 1024 maxelem 65536 bucketsize 12 initval 0x62a0bef7
            add KUBE-CLUSTER-IP 10.96.0.10,udp:53
            add KUBE-CLUSTER-IP 10.96.0.10,tcp:53
            create KUBE-EXTERNAL-IP hash:ip,port family inet hashsize 1024 maxelem 65536 bucketsize 12 initval 0x1
            create KUBE-EXTERNAL-IP-LOCAL hash:ip,port family inet hashsize 1024 maxelem 65536 bucketsize 12 initval 0x2
            create KUBE-LOAD-BALANCER hash:ip,port family inet hashsize 1024 maxelem 65536 bucketsize 12 initval 0x3
            create KUBE-LOAD-BALANCER-FW hash:ip,port family inet hashsize 1024 maxelem 65536 bucketsize 12 initval 0x4
            create KUBE-LOAD-BALANCER-LOCAL hash:ip,port family inet hashsize 1024 maxelem 65536 bucketsize 12 initval 0x5
            create KUBE-LOAD-BALANCER-SOURCE-IP hash:ip,port,ip family inet hashsize 1024 maxelem 65536 bucketsize 12 initval 0x6
            create KUBE-LOAD-BALANCER-SOURCE-CIDR hash:ip,port,net family inet hashsize 1024 maxelem 65536 bucketsize 12 initval 0x7
            add KUBE-LOAD-BALANCER-SOURCE-CIDR 203.0.113.5,tcp:80,192.168.0.0/16
            add KUBE-LOAD-BALANCER-SOURCE-CIDR 203.0.113.5,tcp:80,10.1.2.3
            create KUBE-NODE-PORT-TCP bitmap:port range 0-65535
            add KUBE-NODE-PORT-TCP 8080
            add KUBE-NODE-PORT-TCP 30080
            create KUBE-NODE-PORT-LOCAL-TCP bitmap:port range 0-65535
            create KUBE-NODE-PORT-UDP bitmap:port range 0-65535
            create KUBE-NODE-PORT-LOCAL-UDP bitmap:port range 0-65535
            create KUBE-NODE-PORT-SCTP-HASH hash:ip,port family inet hashsize 1024 maxelem 65536 bucketsize 12 initval 0x8
            create KUBE-NODE-PORT-LOCAL-SCTP-HASH hash:ip,port family inet hashsize 1024 maxelem 65536 bucketsize 12 initval 0x9
            create KUBE-HEALTH-CHECK-NODE-PORT bitmap:port range 0-65535
            create KUBE-IPVS-IPS hash:ip family inet hashsize 4096 maxelem 65536 bucketsize 12 initval 0x9e1b0487
            add KUBE-IPVS-IPS 10.96.0.10
            create OTHER-SET hash:ip family inet hashsize 1024 maxelem 65536
            add OTHER-SET 1.2.3.4
            """;

    private static List<String> names(IpFamily f) {
        return Arrays.stream(IpvsSet.values()).map(s -> s.name(f)).toList();
    }

    @Test
    void onAnEmptyKernelEverySetIsCreatedExactlyAsDeclared() {
        IpsetPlan plan = IpsetPlan.plan(V4, "");
        assertThat(plan.script()).isEqualTo(V4.ipsetRestore());
        assertThat(plan.created()).containsExactlyElementsOf(names(IpFamily.IPV4));
        assertThat(plan.swapped()).isEmpty();
        assertThat(plan.untouched()).isEmpty();
    }

    @Test
    void setsThatMatchAreNotTouched() {
        IpsetPlan plan = IpsetPlan.plan(V4, V4_SAVED);
        assertThat(plan.isEmpty()).isTrue();
        assertThat(plan.untouched()).containsExactlyElementsOf(names(IpFamily.IPV4));
    }

    @Test
    void aSetThatKeepsMostOfItsMembersIsPatchedOneThatIsMostlyReplacedIsSwapped() {
        IpvsRules next = rules(
                IpFamily.IPV4,
                Map.of(
                        IpvsSet.CLUSTER_IP, List.of("10.96.0.10,tcp:53", "10.96.0.11,tcp:443"),
                        IpvsSet.LOAD_BALANCER_SOURCE_CIDR,
                                List.of("203.0.113.5,tcp:80,10.1.2.3/32", "203.0.113.5,tcp:80,192.168.0.0/16"),
                        IpvsSet.NODE_PORT_TCP, List.of("30080"),
                        IpvsSet.IPVS_IPS, List.of("10.96.0.10", "10.96.0.11")));
        IpsetPlan plan = IpsetPlan.plan(next, V4_SAVED);
        // CLUSTER-IP: 2 of 2 change; NODE-PORT-TCP: 1 of 1; IPVS-IPS: 1 of 2, which keeps half.
        assertThat(plan.swapped()).containsExactly("KUBE-CLUSTER-IP", "KUBE-NODE-PORT-TCP");
        assertThat(plan.patched()).containsExactly("KUBE-IPVS-IPS");
        assertThat(plan.created()).isEmpty();
        assertThat(plan.untouched()).hasSize(IpvsSet.values().length - 3).contains("KUBE-LOAD-BALANCER-SOURCE-CIDR");
        assertThat(plan.script()).isEqualTo("""
                destroy RSYNC-TMP-4-0 -exist
                create RSYNC-TMP-4-0 hash:ip,port family inet hashsize 1024 maxelem 65536
                add RSYNC-TMP-4-0 10.96.0.10,tcp:53
                add RSYNC-TMP-4-0 10.96.0.11,tcp:443
                swap RSYNC-TMP-4-0 KUBE-CLUSTER-IP
                destroy RSYNC-TMP-4-0
                destroy RSYNC-TMP-4-1 -exist
                create RSYNC-TMP-4-1 bitmap:port range 0-65535
                add RSYNC-TMP-4-1 30080
                swap RSYNC-TMP-4-1 KUBE-NODE-PORT-TCP
                destroy RSYNC-TMP-4-1
                add KUBE-IPVS-IPS 10.96.0.11 -exist
                """);
        // Other software's sets are never named.
        assertThat(plan.script()).doesNotContain("OTHER-SET");
    }

    @Test
    void aWrongHeaderIsSwappedAwayButAGrownHashSizeIsNot() {
        String saved = V4_SAVED.replace(
                        "create KUBE-NODE-PORT-TCP bitmap:port range 0-65535",
                        "create KUBE-NODE-PORT-TCP bitmap:port range 30000-32767")
                .replace(
                        "KUBE-EXTERNAL-IP hash:ip,port family inet hashsize 1024 maxelem 65536",
                        "KUBE-EXTERNAL-IP hash:ip,port family inet hashsize 1024 maxelem 1000")
                .replace(
                        "KUBE-LOAD-BALANCER-FW hash:ip,port family inet hashsize 1024 maxelem 65536 bucketsize 12 initval 0x4",
                        "KUBE-LOAD-BALANCER-FW hash:ip,port family inet hashsize 1024 maxelem 65536 counters bucketsize 12 initval 0x4");
        IpsetPlan plan = IpsetPlan.plan(V4, saved);
        assertThat(plan.swapped()).containsExactly("KUBE-EXTERNAL-IP", "KUBE-LOAD-BALANCER-FW", "KUBE-NODE-PORT-TCP");
        assertThat(plan.untouched()).contains("KUBE-IPVS-IPS"); // saved with hashsize 4096
    }

    @Test
    void aSetOfAnotherTypeOrFamilyIsRecreatedLast() {
        String saved = V4_SAVED.replace(
                        "create KUBE-IPVS-IPS hash:ip family inet", "create KUBE-IPVS-IPS hash:net family inet")
                .replace(
                        "create KUBE-LOOP-BACK hash:ip,port,ip family inet ",
                        "create KUBE-LOOP-BACK hash:ip,port,ip family inet6 ")
                .replace("add KUBE-NODE-PORT-TCP 8080\n", "");
        IpsetPlan plan = IpsetPlan.plan(V4, saved);
        assertThat(plan.recreated()).containsExactly("KUBE-LOOP-BACK", "KUBE-IPVS-IPS");
        assertThat(plan.patched()).containsExactly("KUBE-NODE-PORT-TCP");
        List<String> lines = plan.script().lines().toList();
        assertThat(lines.subList(lines.indexOf("add KUBE-NODE-PORT-TCP 8080 -exist"), lines.size()))
                .containsExactly(
                        "add KUBE-NODE-PORT-TCP 8080 -exist",
                        "destroy KUBE-LOOP-BACK",
                        "create KUBE-LOOP-BACK hash:ip,port,ip family inet hashsize 1024 maxelem 65536",
                        "destroy KUBE-IPVS-IPS",
                        "create KUBE-IPVS-IPS hash:ip family inet hashsize 1024 maxelem 65536",
                        "add KUBE-IPVS-IPS 10.96.0.10");
    }

    @Test
    void temporarySetsLeftByAnInterruptedRunAreDestroyed() {
        String saved = V4_SAVED + "create RSYNC-TMP-4-7 hash:ip family inet hashsize 1024 maxelem 65536\n"
                + "create RSYNC-TMP-6-0 hash:ip family inet6 hashsize 1024 maxelem 65536\n";
        IpsetPlan plan = IpsetPlan.plan(V4, saved);
        assertThat(plan.leftovers()).containsExactly("RSYNC-TMP-4-7");
        assertThat(plan.script()).isEqualTo("destroy RSYNC-TMP-4-7\n"); // the IPv6 one is the IPv6 sync's
    }

    @Test
    void ipv6SetsCompareInTheFormIpsetPrints() {
        IpvsRules v6 = rules(
                IpFamily.IPV6,
                Map.of(
                        IpvsSet.CLUSTER_IP, List.of("FD00:10:96:0:0:0:0:20,tcp:80", "fd00:10:96::21,UDP:53"),
                        IpvsSet.LOAD_BALANCER_SOURCE_CIDR,
                                List.of(
                                        "2001:db8::20,tcp:80,2001:db8:2::5/128",
                                        "2001:db8::20,tcp:80,2001:db8:1:0::1/48"),
                        IpvsSet.LOOP_BACK, List.of("fd00:10:244::5,sctp:3868,fd00:10:244:0::5")));
        StringBuilder saved = new StringBuilder();
        for (IpvsSet s : IpvsSet.values()) {
            saved.append("create ")
                    .append(s.name(IpFamily.IPV6))
                    .append(' ')
                    .append(s.type())
                    .append(
                            s.bitmap()
                                    ? " range 0-65535"
                                    : " family inet6 hashsize 1024 maxelem 65536 bucketsize 12 initval 0x1")
                    .append('\n');
        }
        saved.append("""
                add KUBE-6-CLUSTER-IP fd00:10:96::21,udp:53
                add KUBE-6-CLUSTER-IP fd00:10:96::20,tcp:80
                add KUBE-6-LOAD-BALANCER-SOURCE-CID 2001:db8::20,tcp:80,2001:db8:2::5
                add KUBE-6-LOAD-BALANCER-SOURCE-CID 2001:db8::20,tcp:80,2001:db8:1::/48
                add KUBE-6-LOOP-BACK fd00:10:244::5,sctp:3868,fd00:10:244::5
                """);
        IpsetPlan plan = IpsetPlan.plan(v6, saved.toString());
        assertThat(plan.isEmpty()).as(plan.script()).isTrue();
        IpsetPlan fresh = IpsetPlan.plan(v6, "");
        assertThat(fresh.script())
                .startsWith("create KUBE-6-LOOP-BACK hash:ip,port,ip family inet6 hashsize 1024 maxelem 65536\n");
        IpsetPlan changed =
                IpsetPlan.plan(v6, saved.toString().replace("add KUBE-6-CLUSTER-IP fd00:10:96::21,udp:53\n", ""));
        assertThat(changed.patched()).containsExactly("KUBE-6-CLUSTER-IP");
        assertThat(changed.script()).isEqualTo("add KUBE-6-CLUSTER-IP fd00:10:96::21,UDP:53 -exist\n");
        IpsetPlan replaced = IpsetPlan.plan(
                v6,
                saved.toString()
                        .replace("add KUBE-6-CLUSTER-IP fd00:10:96::21,udp:53\n", "")
                        .replace("add KUBE-6-CLUSTER-IP fd00:10:96::20,tcp:80\n", ""));
        assertThat(replaced.swapped()).containsExactly("KUBE-6-CLUSTER-IP");
        assertThat(replaced.script())
                .contains("create RSYNC-TMP-6-0 hash:ip,port family inet6 hashsize 1024 maxelem 65536\n");
    }

    @Test
    void fromOneVersionToTheNextWithoutReadingTheKernel() {
        IpvsRules next = rules(
                IpFamily.IPV4,
                Map.of(
                        IpvsSet.CLUSTER_IP, List.of("10.96.0.10,tcp:53", "10.96.0.10,udp:53", "10.96.0.12,tcp:80"),
                        IpvsSet.LOAD_BALANCER_SOURCE_CIDR,
                                List.of("203.0.113.5,tcp:80,10.1.2.3/32", "203.0.113.5,tcp:80,192.168.0.0/16"),
                        IpvsSet.NODE_PORT_TCP, List.of("31000"),
                        IpvsSet.IPVS_IPS, List.of("10.96.0.10")));
        IpsetPlan plan = IpsetPlan.between(V4, next);
        assertThat(plan.patched()).containsExactly("KUBE-CLUSTER-IP");
        assertThat(plan.swapped()).containsExactly("KUBE-NODE-PORT-TCP");
        assertThat(plan.untouched()).hasSize(IpvsSet.values().length - 2);
        assertThat(plan.script()).isEqualTo("""
                add KUBE-CLUSTER-IP 10.96.0.12,tcp:80 -exist
                destroy RSYNC-TMP-4-0 -exist
                create RSYNC-TMP-4-0 bitmap:port range 0-65535
                add RSYNC-TMP-4-0 31000
                swap RSYNC-TMP-4-0 KUBE-NODE-PORT-TCP
                destroy RSYNC-TMP-4-0
                """);
        assertThat(IpsetPlan.between(next, next).isEmpty()).isTrue();
    }

    @Test
    void twoSpellingsOfOneMemberAreAddedOnce() {
        IpvsRules twice =
                rules(IpFamily.IPV4, Map.of(IpvsSet.CLUSTER_IP, List.of("10.96.0.10,80", "10.96.0.10,tcp:80")));
        assertThat(IpsetPlan.plan(twice, "").script().lines().filter(l -> l.startsWith("add KUBE-CLUSTER-IP ")))
                .containsExactly("add KUBE-CLUSTER-IP 10.96.0.10,80");
    }

    @Test
    void membersInTheFormIpsetPrints() {
        assertThat(SetMember.canonical("hash:ip", "2001:0DB8:0000:0000:0000:0000:0000:0001"))
                .isEqualTo("2001:db8::1");
        assertThat(SetMember.canonical("hash:ip", "::ffff:a00:1")).isEqualTo("::ffff:10.0.0.1");
        assertThat(SetMember.canonical("hash:ip,port", "10.96.0.10,80")).isEqualTo("10.96.0.10,tcp:80");
        assertThat(SetMember.canonical("hash:ip,port", "10.96.0.10,TCP:081")).isEqualTo("10.96.0.10,tcp:81");
        assertThat(SetMember.canonical("hash:ip,port", "FD00::1,sctp:3868")).isEqualTo("fd00::1,sctp:3868");
        assertThat(SetMember.canonical("hash:ip,port,ip", "FD00::5,tcp:53,fd00:0::5"))
                .isEqualTo("fd00::5,tcp:53,fd00::5");
        assertThat(SetMember.canonical("hash:ip,port,net", "10.0.0.1,tcp:80,10.1.2.3/24"))
                .isEqualTo("10.0.0.1,tcp:80,10.1.2.0/24");
        assertThat(SetMember.canonical("hash:ip,port,net", "10.0.0.1,tcp:80,10.1.2.3/32"))
                .isEqualTo("10.0.0.1,tcp:80,10.1.2.3");
        assertThat(SetMember.canonical("hash:ip,port,net", "fd00::1,tcp:80,2001:DB8:0:0::/64"))
                .isEqualTo("fd00::1,tcp:80,2001:db8::/64");
        assertThat(SetMember.canonical("hash:ip,port,net", "fd00::1,tcp:80,2001:db8::5/128"))
                .isEqualTo("fd00::1,tcp:80,2001:db8::5");
        assertThat(SetMember.canonical("bitmap:port", "0080")).isEqualTo("80");
        assertThat(SetMember.canonical("bitmap:port", "65535")).isEqualTo("65535");
        // Not rulesync's to write; compared as text.
        assertThat(SetMember.canonical("hash:ip,port", "10.96.0.10,tcp:http")).isEqualTo("10.96.0.10,tcp:http");
        assertThat(SetMember.canonical("hash:ip,port", "junk")).isEqualTo("junk");
    }

    @Test
    void saveTextIsRead() {
        Map<String, SavedSet> sets = SavedSet.parseAll("""
                create A hash:ip,port family inet hashsize 1024 maxelem 65536 counters comment bucketsize 12 initval 0x1
                add A 10.0.0.1,tcp:80 packets 0 bytes 0 comment "x"
                create B bitmap:port range 0-65535
                """);
        assertThat(sets.get("A").options())
                .containsExactly(
                        Map.entry("family", "inet"),
                        Map.entry("hashsize", "1024"),
                        Map.entry("maxelem", "65536"),
                        Map.entry("counters", ""),
                        Map.entry("comment", ""),
                        Map.entry("bucketsize", "12"),
                        Map.entry("initval", "0x1"));
        assertThat(sets.get("A").members()).containsExactly("10.0.0.1,tcp:80");
        assertThat(sets.get("A").family()).isEqualTo(IpFamily.IPV4);
        assertThat(sets.get("B").family()).isNull();
        assertThat(sets.get("B").createLine("T")).isEqualTo("create T bitmap:port range 0-65535");
        assertThatThrownBy(() -> SavedSet.parseAll("add X 1.2.3.4\n")).hasMessageContaining("undeclared set");
        assertThatThrownBy(() -> SavedSet.parseAll("flush X\n")).hasMessageContaining("not an ipset save line");
        assertThat(Arrays.stream(IpvsSet.values())
                        .map(s -> s.name(IpFamily.IPV6))
                        .collect(Collectors.toList()))
                .allMatch(n -> n.length() <= IpvsSet.MAX_NAME);
        assertThat(IpsetPlan.tempPrefix(IpFamily.IPV6) + "99").hasSizeLessThanOrEqualTo(IpvsSet.MAX_NAME);
    }
}
