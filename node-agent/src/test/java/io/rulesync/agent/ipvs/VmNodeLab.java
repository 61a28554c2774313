package io.rulesync.agent.ipvs;

import io.rulesync.agent.Agent;
import io.rulesync.agent.AgentConfig;
import io.rulesync.agent.mode.ModeChoice.WhenUnavailable;
import io.rulesync.agent.mode.ProxyMode;
import io.rulesync.agent.testing.History;
import io.rulesync.agent.testing.OneVersionAgent;
import io.rulesync.compiler.version.ClusterHead;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.model.event.ClusterEvent.SettingsChanged;
import io.rulesync.model.event.ClusterSettings;
import io.rulesync.model.rules.ClusterRules;
import io.rulesync.testsupport.cluster.Fixtures;
import io.rulesync.testsupport.vm.KernelVm;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A node in the kernel lab's VM, for packets through what the agent programs: a node namespace (where the agent
 * works), three pods behind its bridge serving their names over HTTP (busybox httpd), and two clients on links of their
 * own. The agent is node-a's, its commands run in the VM's node namespace; the clusters are compiled by the real
 * compiler.
 */
final class VmNodeLab implements AutoCloseable {
    static final String CLUSTER = History.CLUSTER;
    static final String NODE_NS = "pk-node";
    static final String NODE_IP = "192.168.1.1";
    static final String WEB_IP = "10.96.0.10";
    static final List<String> PODS = List.of("10.244.0.10", "10.244.0.11", "10.244.0.12");

    private final KernelVm vm;
    final List<NodeAck> acks = new ArrayList<>();

    /** Builds the node, its pods and clients. */
    VmNodeLab(KernelVm vm) {
        this.vm = vm;
        StringBuilder s = new StringBuilder("set -e\n");
        s.append("ip netns add pk-node; ip -n pk-node link set lo up\n")
                .append("ip netns exec pk-node sysctl -qw net.ipv4.ip_forward=1\n")
                .append("ip -n pk-node link add cbr0 type bridge\n")
                .append("ip -n pk-node addr add 10.244.0.1/24 dev cbr0; ip -n pk-node link set cbr0 up\n");
        for (int i = 0; i < PODS.size(); i++) {
            String veth = "veth" + i;
            s.append(joined("pk-pod" + i, veth, PODS.get(i) + "/24", "10.244.0.1"))
                    .append("ip -n pk-node link set " + veth + " master cbr0\n")
                    .append("ip -n pk-node link set " + veth + " type bridge_slave hairpin on\n")
                    .append(pages(i))
                    // IPv4 only: on [::] the peer would read as [::ffff:a.b.c.d]
                    .append("ip netns exec pk-pod" + i + " httpd -p 0.0.0.0:8080 -h /tmp/www" + i + "\n");
        }
        for (int c = 1; c <= 2; c++) {
            String net = "192.168." + c;
            s.append(joined("pk-client" + c, "c" + c, net + ".2/24", net + ".1"))
                    .append("ip -n pk-node addr add " + net + ".1/24 dev c" + c + "\n");
        }
        vm.sh(s.toString());
    }

    /**
     * Namespace {@code ns} joined to the node by a veth ({@code eth0} inside, {@code nodeSide} in the node), with
     * {@code address} and its default route through {@code gateway}: a pod's or a client's.
     */
    private static String joined(String ns, String nodeSide, String address, String gateway) {
        return "ip netns add " + ns + "\n"
                + "ip -n pk-node link add " + nodeSide + " type veth peer name eth0 netns " + ns + "\n"
                + "ip -n pk-node link set " + nodeSide + " up\n"
                + "ip -n " + ns + " link set lo up\n"
                + "ip -n " + ns + " addr add " + address + " dev eth0\n"
                + "ip -n " + ns + " link set eth0 up\n"
                + "ip -n " + ns + " route add default via " + gateway + "\n";
    }

    /**
     * What pod {@code i} serves: its name at {@code /}; its name and the address its request came from at
     * {@code /cgi-bin/peer} (busybox httpd runs it as CGI, which is given the peer); its name and then lines without end
     * at {@code /cgi-bin/stream}, for a connection a test holds open.
     */
    private static String pages(int i) {
        String www = "/tmp/www" + i;
        return "mkdir -p " + www + "/cgi-bin; echo pod" + i + " > " + www + "/index.html\n"
                + "printf '#!/bin/sh\\necho Content-Type: text/plain\\necho\\necho pod" + i + " $REMOTE_ADDR\\n' > "
                + www + "/cgi-bin/peer\n"
                + "printf '#!/bin/sh\\necho Content-Type: text/plain\\necho\\necho pod" + i + "\\nexec yes\\n' > "
                + www + "/cgi-bin/stream\n"
                + "chmod +x " + www + "/cgi-bin/*\n";
    }

    /** The pods' servers, held connections and every namespace of the lab go: what one test programs is not what the next one sees. */
    @Override
    public void close() {
        vm.sh("kill -9 $(cat /tmp/pk-hold-*.pid 2>/dev/null) $(pidof httpd) 2>/dev/null; rm -f /tmp/pk-hold-*;"
                + " for n in $(ip netns list | cut -d' ' -f1 | grep '^pk-'); do ip netns delete $n; done");
    }

    /**
     * A connection from namespace {@code ns} to {@code address} ({@code ip:port}) held open: it asks for the pod's
     * endless stream and reads only the pod's name, so the answer waits unread in the client's socket. Returns the pod
     * that answered. {@link #reset} ends it.
     */
    String hold(String ns, String address, String name) {
        String pid = "/tmp/pk-hold-" + name + ".pid";
        String out = "/tmp/pk-hold-" + name + ".out";
        String reader = "/tmp/pk-hold-" + name + "-reader.pid";
        return vm.sh("rm -f " + out + "; (ip netns exec " + ns + " sh -c 'echo $$ > " + pid
                        + "; exec wget -q -O- http://"
                        + address + "/cgi-bin/stream' 2>/dev/null | { echo $BASHPID > " + reader + "; grep -m1 ^pod > "
                        + out + "; exec sleep 600; })"
                        + " > /dev/null 2>&1 &\n"
                        + "for i in $(seq 100); do [ -s " + out + " ] && break; sleep 0.1; done; cat " + out)
                .strip();
    }

    /**
     * Ends a held connection as a client killed with data unread ends it: with a reset, which IPVS keeps for ten
     * seconds (a closed connection would stay two minutes in TIME_WAIT, a state whose timeout cannot be set).
     */
    void reset(String name) {
        vm.sh("kill -9 $(cat /tmp/pk-hold-" + name + ".pid)");
    }

    /** The connections the node's IPVS tracks for {@code vip}, persistence templates included. */
    String connections(String vip) {
        return vm.sh("ip netns exec " + NODE_NS + " ipvsadm -Lnc | grep ' " + vip + ":' || true");
    }

    /** The cluster, compiled as the compiler compiles it, with {@code scheduler} and {@code objects} besides the node. */
    ClusterRules cluster(String scheduler, String... objects) {
        ClusterSettings settings = new ClusterSettings(
                List.of(IpFamily.IPV4), List.of(Cidr.parse("10.244.0.0/16")), false, 14, List.of(), scheduler);
        List<ClusterEvent> events = new ArrayList<>();
        events.add(new SettingsChanged(CLUSTER, settings, Fixtures.T));
        events.add(Fixtures.upsert(CLUSTER, Fixtures.node("node-a", NODE_IP)));
        Arrays.stream(objects).map(o -> Fixtures.upsert(CLUSTER, o)).forEach(events::add);
        return ClusterHead.empty(CLUSTER).apply(events).next().published();
    }

    /**
     * The agent of node-a in IPVS mode (falling back to iptables mode where IPVS cannot be used, or refusing), its
     * state in {@code stateDir}; started, it applies version 1 and acks.
     */
    Agent agent(ClusterRules rules, WhenUnavailable whenUnavailable, Path stateDir) {
        return agent(new History(rules), whenUnavailable, stateDir, Clock.systemUTC());
    }

    /** The same, over the versions of {@code history} and on {@code clock}: started, it applies the latest. */
    Agent agent(History history, WhenUnavailable whenUnavailable, Path stateDir, Clock clock) {
        AgentConfig config =
                OneVersionAgent.config(CLUSTER, "node-a", NODE_NS, stateDir, ProxyMode.IPVS, whenUnavailable);
        Agent a = config.agent(history.snapshots(), acks::add, vm.runner().inNetns(NODE_NS), NODE_NS, clock);
        a.start();
        return a;
    }

    /** The kernel's IPVS table in the node, read by the agent's adapter. */
    IpvsadmKernel table() {
        return new IpvsadmKernel(vm.runner().inNetns(NODE_NS));
    }

    List<String> fetch(String ns, String url, int count) {
        String out = vm.sh("for i in $(seq " + count + "); do ip netns exec " + ns + " timeout 5 wget -q -O- " + url
                + " 2>&1 || echo FAILED; done");
        return out.lines().toList();
    }

    /** The latest ack. */
    NodeAck lastAck() {
        return acks.get(acks.size() - 1);
    }
}
