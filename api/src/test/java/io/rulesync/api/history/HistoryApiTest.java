package io.rulesync.api.history;

import static io.rulesync.api.testing.TestApi.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.api.testing.StoredClusters;
import io.rulesync.api.testing.TestApi;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.testing.needs.RequiresPostgres;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** A cluster's history over real HTTP, from versions stored in a real PostgreSQL the compiler's way. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@RequiresPostgres
class HistoryApiTest {
    private TestApi api;

    @BeforeAll
    void setUp() throws Exception {
        api = TestApi.onTwoVersions("shop");
    }

    @AfterAll
    void tearDown() {
        if (api != null) {
            api.close();
        }
    }

    private HttpResponse<String> get(String path) throws Exception {
        return api.get(path);
    }

    /** The version numbers of a page, in order. */
    private static List<Object> numbers(Map<?, ?> page) {
        return ((List<?>) page.get("versions"))
                .stream().map(v -> (Object) ((Map<?, ?>) v).get("version")).toList();
    }

    private static Map<?, ?> json(HttpResponse<String> r) {
        return TestApi.json(r);
    }

    @Test
    void historyIsNewestFirstInPages() throws Exception {
        Map<?, ?> all = json(get("/api/v1/clusters/shop/versions"));
        assertThat(all.get("head")).isEqualTo(2);
        List<?> versions = (List<?>) all.get("versions");
        assertThat(numbers(all)).containsExactly(2, 1);
        assertThat(((Map<?, ?>) versions.get(0)).get("cause")).isEqualTo(Map.of("test", true));
        assertThat(((Map<?, ?>) versions.get(0)).get("causeSummary")).isEqualTo("test: true");
        assertThat(all.get("next")).isNull();

        Map<?, ?> first = json(get("/api/v1/clusters/shop/versions?limit=1"));
        assertThat(numbers(first)).containsExactly(2);
        assertThat(first.get("next")).isEqualTo("/api/v1/clusters/shop/versions?before=2&limit=1");
        Map<?, ?> second = json(get((String) first.get("next")));
        assertThat(numbers(second)).containsExactly(1);
        assertThat(second.get("next")).isNull();
    }

    @Test
    void aVersionsMetadataAndANodesExactRules() throws Exception {
        Map<?, ?> v1 = json(get("/api/v1/clusters/shop/versions/1"));
        assertThat(v1.get("version")).isEqualTo(1);
        assertThat(v1.get("createdAt"))
                .isEqualTo(api.store()
                        .history()
                        .version("shop", 1)
                        .orElseThrow()
                        .createdAt()
                        .toString());
        HttpResponse<String> rules = get("/api/v1/clusters/shop/versions/2/rules?node=n1&family=ipv4");
        assertThat(rules.statusCode()).isEqualTo(200);
        assertThat(rules.headers().firstValue("Content-Type").orElse("")).startsWith("text/plain");
        assertThat(rules.body())
                .isEqualTo(api.store()
                        .history()
                        .rules("shop", 2)
                        .ruleSet("n1", IpFamily.IPV4)
                        .orElseThrow()
                        .render());
        assertThat(get("/api/v1/clusters/shop/versions/2/rules?node=n1").body()).isEqualTo(rules.body());
        assertThat(get("/api/v1/clusters/shop/versions/2/rules?node=n1&mode=iptables")
                        .body())
                .isEqualTo(rules.body());

        // The same version in IPVS mode: the node's three inputs, from the same stored fragments.
        HttpResponse<String> ipvs = get("/api/v1/clusters/shop/versions/2/rules?node=n1&mode=ipvs");
        assertThat(ipvs.statusCode()).isEqualTo(200);
        assertThat(ipvs.body())
                .isEqualTo(api.store()
                        .history()
                        .rules("shop", 2)
                        .ipvs("n1", IpFamily.IPV4)
                        .orElseThrow()
                        .render())
                .startsWith("######## ipvsadm-restore ########\n-A -t ")
                .contains("######## ipset restore ########\n")
                .contains("add KUBE-CLUSTER-IP ");
    }

    @Test
    void aDiffSaysPerNodeWhichChainsAndRulesChanged() throws Exception {
        // v1 -> v2 replaced web's endpoint 10.244.1.2 by 10.244.1.3. web is internalTrafficPolicy: Local with its
        // endpoints on n1, so only n1's rules change; n2 has no local endpoint in either version.
        Map<?, ?> d = json(get("/api/v1/clusters/shop/versions/2/diff"));
        assertThat(d.get("from")).isEqualTo(1);
        assertThat(d.get("to")).isEqualTo(2);
        assertThat(d.get("unchangedNodes")).isEqualTo(List.of("n2"));
        List<?> changes = (List<?>) d.get("changes");
        assertThat(changes).hasSize(1);
        Map<?, ?> n1 = (Map<?, ?>) changes.get(0);
        assertThat(n1.get("nodes")).isEqualTo(List.of("n1"));
        assertThat(n1.get("change")).isEqualTo("changed");
        Map<?, ?> nat = ((List<?>) ((Map<?, ?>) ((List<?>) n1.get("families")).get(0)).get("tables"))
                .stream()
                        .map(t -> (Map<?, ?>) t)
                        .filter(t -> t.get("table").equals("nat"))
                        .findFirst()
                        .orElseThrow();
        // One endpoint chain went, one came, and the service's chain now jumps to the new one.
        assertThat((List<?>) nat.get("chainsRemoved"))
                .singleElement()
                .asString()
                .startsWith("KUBE-SEP-");
        Map<?, ?> added = (Map<?, ?>) ((List<?>) nat.get("chainsAdded")).get(0);
        assertThat(added.get("rules").toString()).contains("--to-destination 10.244.1.3:8080");
        assertThat((List<?>) nat.get("chainsChanged")).anySatisfy(c -> {
            Map<?, ?> chain = (Map<?, ?>) c;
            assertThat(chain.get("rulesAdded").toString()).contains((String) added.get("chain"));
            assertThat(chain.get("rulesRemoved").toString())
                    .contains((String) ((List<?>) nat.get("chainsRemoved")).get(0));
        });

        // Backwards, the same change undone; one node only; and a node's view from nothing is "joined".
        Map<?, ?> back = json(get("/api/v1/clusters/shop/versions/1/diff?from=2"));
        assertThat(back.get("unchangedNodes")).isEqualTo(List.of("n2"));
        assertThat(json(get("/api/v1/clusters/shop/versions/2/diff?node=n2")).get("changes"))
                .isEqualTo(List.of());
        Map<?, ?> first = json(get("/api/v1/clusters/shop/versions/1/diff"));
        assertThat(first.get("from")).isEqualTo(0);
        assertThat(first.get("changes")).isEqualTo(List.of(Map.of("nodes", List.of("n1", "n2"), "change", "joined")));
    }

    @Test
    void anIpvsDiffSaysWhatChangedInOneNodesIpvsConfiguration() throws Exception {
        // The same change in IPVS mode: n1's hairpin entry and web's real server move to 10.244.1.3.
        Map<?, ?> n1 = json(get("/api/v1/clusters/shop/versions/2/diff?mode=ipvs&node=n1"));
        assertThat(n1.get("change")).isEqualTo("changed");
        Map<?, ?> v4 = (Map<?, ?>) ((List<?>) n1.get("families")).get(0);
        assertThat(v4.get("family")).isEqualTo("ipv4");
        assertThat(v4.get("virtualServersAdded")).isEqualTo(List.of());
        assertThat((List<?>) v4.get("virtualServersChanged")).anySatisfy(c -> {
            Map<?, ?> vs = (Map<?, ?>) c;
            assertThat(vs.get("realServersAdded")).isEqualTo(List.of("10.244.1.3:8080"));
            assertThat(vs.get("realServersRemoved")).isEqualTo(List.of("10.244.1.2:8080"));
            assertThat(vs.get("settingsBefore")).isNull();
        });
        assertThat((List<Object>) v4.get("sets"))
                .contains(Map.of(
                        "set",
                        "KUBE-LOOP-BACK",
                        "added",
                        List.of("10.244.1.3,tcp:8080,10.244.1.3"),
                        "removed",
                        List.of("10.244.1.2,tcp:8080,10.244.1.2")));
        // The same, rendered once for every reader as a unified diff.
        assertThat((String) n1.get("text"))
                .startsWith("--- shop version 1\n+++ shop version 2\n@@ n1 (ipvs mode): changed @@\n ipv4\n")
                .contains("\n-real server 10.244.1.2:8080\n+real server 10.244.1.3:8080\n")
                .contains("\n set KUBE-LOOP-BACK\n-10.244.1.2,tcp:8080,10.244.1.2\n+10.244.1.3,tcp:8080,10.244.1.3\n");
        // A node joins with all of it; the change backwards is the mirror image.
        Map<?, ?> joined = json(get("/api/v1/clusters/shop/versions/1/diff?mode=ipvs&node=n1"));
        assertThat(joined.get("change")).isEqualTo("joined");
        assertThat((List<?>) ((Map<?, ?>) ((List<?>) joined.get("families")).get(0)).get("virtualServersAdded"))
                .isNotEmpty();
        Map<?, ?> back =
                (Map<?, ?>) ((List<?>) json(get("/api/v1/clusters/shop/versions/1/diff?from=2&mode=ipvs&node=n1"))
                                .get("families"))
                        .get(0);
        assertThat((List<Object>) back.get("sets"))
                .contains(Map.of(
                        "set",
                        "KUBE-LOOP-BACK",
                        "added",
                        List.of("10.244.1.2,tcp:8080,10.244.1.2"),
                        "removed",
                        List.of("10.244.1.3,tcp:8080,10.244.1.3")));
        assertProblem(
                get("/api/v1/clusters/shop/versions/2/diff?mode=ipvs"), 400, "node", "mode=ipvs needs ?node=NAME");
        assertProblem(
                get("/api/v1/clusters/shop/versions/2/diff?mode=nft&node=n1"),
                400,
                "mode",
                "'nft' is not iptables, ipvs or nftables");
    }

    @Test
    void nftablesModeHasANodesTableAndItsDiff() throws Exception {
        // The node's kube-proxy table, from the same stored fragments, as nft -f loads it.
        HttpResponse<String> table = get("/api/v1/clusters/shop/versions/2/rules?node=n1&mode=nftables");
        assertThat(table.statusCode()).isEqualTo(200);
        assertThat(table.body())
                .isEqualTo(api.store()
                        .history()
                        .rules("shop", 2)
                        .nftables("n1", IpFamily.IPV4)
                        .orElseThrow()
                        .render())
                .startsWith("add table ip kube-proxy { comment \"rules for kube-proxy\" ; }\n")
                .contains("add element ip kube-proxy cluster-ips { 10.96.0.10 }");

        // The change of version 2 in nftables mode: web's endpoint on n1 moves from 10.244.1.2 to 10.244.1.3.
        HttpResponse<String> r = get("/api/v1/clusters/shop/versions/2/diff?mode=nftables&node=n1");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        Map<?, ?> n1 = json(r);
        assertThat(n1.get("mode")).isEqualTo("nftables");
        assertThat(n1.get("change")).isEqualTo("changed");
        Map<?, ?> v4 = (Map<?, ?>) ((List<?>) n1.get("families")).get(0);
        assertThat(v4.get("family")).isEqualTo("ipv4");
        assertThat((List<?>) v4.get("removed"))
                .anySatisfy(l -> assertThat((String) l).endsWith("meta l4proto tcp dnat to 10.244.1.2:8080"));
        assertThat((List<?>) v4.get("added"))
                .anySatisfy(l -> assertThat((String) l).endsWith("meta l4proto tcp dnat to 10.244.1.3:8080"));
        // What the agent runs: the new endpoint chain and the service chain written, the old endpoint chain deleted
        // last.
        List<?> tx = (List<?>) v4.get("transaction");
        assertThat(tx).anySatisfy(l -> assertThat((String) l).startsWith("add chain ip kube-proxy endpoint-"));
        assertThat((String) tx.get(tx.size() - 1)).startsWith("delete chain ip kube-proxy endpoint-");
        assertThat((String) n1.get("text"))
                .startsWith("--- shop version 1\n+++ shop version 2\n@@ n1 (nftables mode): changed @@\n ipv4\n")
                .contains("\n-add rule ip kube-proxy endpoint-")
                .contains("\n+add rule ip kube-proxy endpoint-");
        // n2 runs none of web's endpoints and web's traffic policy is Local: its table is the same.
        Map<?, ?> n2 = json(get("/api/v1/clusters/shop/versions/2/diff?mode=nftables&node=n2"));
        assertThat(n2.get("change")).isEqualTo("unchanged");
        assertThat(n2.get("families")).isEqualTo(List.of());
        assertProblem(
                get("/api/v1/clusters/shop/versions/2/diff?mode=nftables"),
                400,
                "node",
                "mode=nftables needs ?node=NAME");
    }

    @Test
    void aVersionCompiledBeforeNftablesModeSaysSo() throws Exception {
        StoredClusters.compiledBeforeNftables(api.store(), "old");
        assertThat(get("/api/v1/clusters/old/versions/1/rules?node=n1").statusCode())
                .isEqualTo(200);
        assertProblem(
                get("/api/v1/clusters/old/versions/1/rules?node=n1&mode=nftables"),
                404,
                "mode",
                "mode: version 1 of cluster 'old' was compiled before nftables mode: it has no nftables rules");
    }

    @Test
    void errorsAreProblemsNamingTheParameter() throws Exception {
        assertProblem(
                get("/api/v1/clusters/shop/versions/2/diff?from=x"), 400, "from", "from: 'x' is not a version number");
        assertProblem(
                get("/api/v1/clusters/shop/versions/2/diff?from=7"),
                404,
                "from",
                "from: cluster 'shop' has no version 7");
        assertProblem(
                get("/api/v1/clusters/shop/versions/2/diff?node=n7"),
                404,
                "node",
                "'n7' is a node of cluster 'shop' at neither");
        assertProblem(get("/api/v1/clusters/shop/versions/2/diff?node=N_7"), 400, "node", "node: ");
        assertProblem(get("/api/v1/clusters/nope/versions"), 404, "cluster", "cluster: 'nope' is not known");
        assertProblem(
                get("/api/v1/clusters/shop/versions/9"), 404, "version", "has no version 9 (its versions are 1-2)");
        assertProblem(get("/api/v1/clusters/shop/versions/x"), 400, "version", "version: 'x' is not a version number");
        assertProblem(get("/api/v1/clusters/shop/versions?limit=9999"), 400, "limit", "limit: '9999' is not 1-500");
        assertProblem(
                get("/api/v1/clusters/shop/versions?before=-1"), 400, "before", "before: '-1' is not a version number");
        assertProblem(get("/api/v1/clusters/shop/versions/2/rules"), 400, "node", "node: the query parameter");
        assertProblem(get("/api/v1/clusters/shop/versions/2/rules?node=n9"), 404, "node", "'n9' is not a node");
        assertProblem(
                get("/api/v1/clusters/shop/versions/2/rules?node=n1&family=ipx"),
                400,
                "family",
                "'ipx' is not ipv4 or ipv6");
        assertProblem(
                get("/api/v1/clusters/shop/versions/2/rules?node=n1&mode=nft"),
                400,
                "mode",
                "'nft' is not iptables, ipvs or nftables");
    }
}
