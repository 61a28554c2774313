package io.rulesync.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.api.testing.StoredClusters;
import io.rulesync.api.testing.TestApi;
import io.rulesync.compiler.version.ClusterHead;
import io.rulesync.model.ack.NodeAck;
import io.rulesync.model.event.ClusterEvent;
import io.rulesync.store.NodeStatusStore;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testing.needs.RequiresTool;
import io.rulesync.testsupport.TestDatabase;
import io.rulesync.testsupport.cluster.Fixtures;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The cluster page with 1,000 nodes in a real browser: every node is a square of the grid coloured by its state, a failed
 * node's error is in its tooltip, and the page's draw times are printed (a figure for BENCHMARKS.md, not a limit).
 */
@RequiresPostgres
@RequiresTool({"chromium", "chromedriver"})
class DashboardScaleTest {
    private static final int NODES = 1000;

    @Test
    void aThousandNodesAreOneGridWithTheirStates() throws Exception {
        try (TestDatabase db = TestDatabase.create();
                TestApi api = TestApi.on(db.url(), db.user(), db.password())) {
            List<ClusterEvent> events = new ArrayList<>();
            for (int i = 0; i < NODES; i++) {
                events.add(Fixtures.upsert(
                        "big", Fixtures.node(String.format("node-%04d", i), "10.1." + i / 250 + "." + (i % 250 + 1))));
            }
            events.add(Fixtures.upsert("big", Fixtures.service("web", "10.96.0.10")));
            events.add(Fixtures.upsert("big", Fixtures.slice("web", "node-0000", "10.244.0.10", "10.244.0.11")));
            ClusterHead.Step v1 = StoredClusters.next(
                    api.store(), "big", ClusterHead.empty("big").apply(List.of()), -1, events.size(), events);
            StoredClusters.next(
                    api.store(),
                    "big",
                    v1,
                    events.size(),
                    List.of(Fixtures.upsert("big", Fixtures.slice("web", "node-0000", "10.244.0.10", "10.244.0.12"))));
            // 890 nodes run version 2, 100 still run 1, and 10 failed 2 (and run 1).
            // Stored as the api stores acks (the acks endpoint is tested elsewhere, with each node's own credential).
            List<NodeAck> acks = new java.util.ArrayList<>();
            for (int i = 0; i < NODES; i++) {
                boolean failed = i % 100 == 7;
                long running = i % 10 == 3 ? 1 : failed ? 1 : 2;
                NodeAck a = new NodeAck(
                        "big",
                        String.format("node-%04d", i),
                        failed ? 2 : running,
                        running,
                        failed ? NodeAck.Status.FAILED : NodeAck.Status.APPLIED,
                        failed ? "iptables-restore: line 3 failed" : null,
                        12,
                        40,
                        "iptables",
                        Instant.now());
                acks.add(a);
            }
            new NodeStatusStore(api.context().getBean(javax.sql.DataSource.class)).recordAcks(acks);
            WebDriver browser = DashboardBrowserTest.chromium();
            try {
                WebDriverWait wait = new WebDriverWait(browser, Duration.ofSeconds(60));
                wait.ignoring(StaleElementReferenceException.class);
                browser.get(api.baseUrl() + "/");
                DashboardBrowserTest.login(browser, wait, TestApi.VIEWER.token());
                wait.until(d -> !d.findElements(By.id("clusters")).isEmpty());
                // Every node acked: the counts are taken when the acks are written in their batch.
                wait.until(d -> {
                    d.navigate().refresh();
                    return !d.findElements(By.cssSelector("#clusters tr[data-cluster='big']"))
                                    .isEmpty()
                            && d.findElement(By.cssSelector("#clusters tr[data-cluster='big']"))
                                    .getText()
                                    .contains("890 converged, 100 behind, 10 failed");
                });
                long start = System.nanoTime();
                browser.get(api.baseUrl() + "/#/clusters/big");
                wait.until(d -> d.findElements(By.cssSelector("#node-grid a")).size() == NODES);
                long firstDraw = (System.nanoTime() - start) / 1_000_000;
                assertThat(browser.findElements(By.cssSelector("#node-grid a.converged")))
                        .hasSize(890);
                assertThat(browser.findElements(By.cssSelector("#node-grid a.behind")))
                        .hasSize(100);
                assertThat(browser.findElement(By.cssSelector("#node-grid a[data-node='node-0007']"))
                                .getAttribute("class"))
                        .isEqualTo("failed");
                assertThat(browser.findElement(By.cssSelector("#node-grid a[data-node='node-0007']"))
                                .getAttribute("title"))
                        // The versions carry the fixtures' fixed time, so the lag is whatever the host's clock makes of
                        // it.
                        .matches(
                                "node-0007: failed, runs v1, 1 behind \\((\\d+[dhms] ?){1,2}\\) — iptables-restore: line 3 failed");
                assertThat(browser.findElements(By.cssSelector("#lagging tbody tr")))
                        .hasSize(50);
                // The grid fits the page's width in rows: readable without scrolling sideways.
                Number width = (Number)
                        ((JavascriptExecutor) browser)
                                .executeScript(
                                        "return document.getElementById('node-grid').scrollWidth - document.getElementById('node-grid').clientWidth;");
                assertThat(width.intValue()).isZero();
                // One redraw of the page as its refresh does it: the three api reads and the new content, timed in the
                // page.
                Number redraw = (Number) ((JavascriptExecutor) browser).executeAsyncScript("""
                        const done = arguments[arguments.length - 1];
                        const t = performance.now();
                        const token = sessionStorage.getItem('rulesync.token');
                        const h = {Authorization: 'Bearer ' + token};
                        Promise.all(['/api/v1/clusters', '/api/v1/clusters/big/versions?limit=50', '/api/v1/clusters/big/nodes?limit=1000',
                                     '/api/v1/clusters/big/rollout'].map(p => fetch(p, {headers: h}).then(r => r.text())))
                          .then(() => { const g = document.getElementById('node-grid'); const html = g.innerHTML; g.innerHTML = '';
                                        g.innerHTML = html; g.offsetHeight; done(performance.now() - t); });""");
                System.out.printf(
                        "dashboard, cluster page with %d nodes (headless Chromium, this machine): first draw %d ms from "
                                + "navigation; one refresh (4 api reads + redrawing the grid) %.0f ms%n",
                        NODES, firstDraw, redraw.doubleValue());
                DashboardBrowserTest.shot(browser, "1000-nodes");
            } finally {
                browser.quit();
            }
        }
    }
}
