package io.rulesync.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.rulesync.testing.needs.RequiresKafka;
import io.rulesync.testing.needs.RequiresPostgres;
import io.rulesync.testing.needs.RequiresTool;
import io.rulesync.testing.tiers.EndToEnd;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The dashboard in a real browser (Debian's headless Chromium, driven through its chromedriver) against the real demo:
 * Kafka, the compiler, PostgreSQL, the api and the dry-run agents. A wrong token is told why; a viewer sees the fleet, a
 * cluster, a version's diff and a node's rules, and no rollback control; an operator rolls a cluster back with a reason and
 * a confirmation that names the version, and watches the new version appear and the nodes converge without reloading.
 * Each page's screenshot is saved under {@code target/screenshots}.
 */
@EndToEnd
@RequiresPostgres(local = true)
@RequiresKafka
@RequiresTool({"chromium", "chromedriver"})
class DashboardBrowserTest {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final Path SHOTS = Path.of("target", "screenshots");

    @TempDir
    Path dir;

    @Test
    void viewersLookOperatorsRollBackAndAWrongTokenIsToldWhy() throws Exception {
        DemoRun.copyExamples(dir);
        // A canary bake longer than the test: shop's next version reaches node-b only when the operator promotes it.
        Path fleet = dir.resolve("fleet.yaml");
        Files.writeString(
                fleet,
                Files.readString(fleet)
                        .replace(
                                "{name: canary, nodes: [node-a], bake: 10s}",
                                "{name: canary, nodes: [node-a], bake: 10m}"));
        String db = DemoRun.createDatabase("rulesync_demo_dashboard_");
        try (DemoRun demo = new DemoRun(dir, db)) {
            assertThat(demo.started()).isTrue();
            // A cluster's first version is its whole first listing: both nodes run it.
            demo.await(0, "shop     node-b   applied version 1");
            String page = demo.find("dashboard at (http://\\S+/) ");
            String viewer = demo.find("viewer +(rs_\\S+)");
            String operator = demo.find("operator (rs_\\S+)");
            WebDriver browser = chromium();
            try {
                WebDriverWait wait = new WebDriverWait(browser, WAIT);
                wait.ignoring(StaleElementReferenceException.class); // pages redraw what changed every 2 s
                browser.get(page);

                login(browser, wait, "rs_not-a-token-of-this-api");
                wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("login-error"), "not accepted"));
                assertThat(browser.findElement(By.id("login-error")).getText())
                        .contains("This token is not accepted (401)");
                shot(browser, "login-wrong-token");

                // A viewer: the fleet, a cluster, a plan, a version's diff and a node's rules; no control that changes
                // anything.
                login(browser, wait, viewer);
                WebElement shop = wait.until(ExpectedConditions.presenceOfElementLocated(
                        By.cssSelector("#clusters tr[data-cluster='shop']")));
                assertThat(browser.findElement(By.cssSelector("#clusters tr[data-cluster='edge']"))
                                .getText())
                        .contains("edge");
                assertThat(browser.findElement(By.id("who")).getText()).isEqualTo("demo-viewer (viewer)");
                wait.until(d -> d.findElement(By.cssSelector("#clusters tr[data-cluster='shop']"))
                        .getText()
                        .contains("2 converged"));
                shot(browser, "fleet");
                accessible(browser, "fleet");
                shop.findElement(By.linkText("shop")).click();
                wait.until(
                        ExpectedConditions.presenceOfElementLocated(By.cssSelector("#versions tr[data-version='1']")));
                assertThat(browser.findElements(By.cssSelector("#node-grid a"))).hasSize(2);
                assertThat(browser.findElements(By.cssSelector(".operator-action")))
                        .as("a viewer sees no rollback or resume")
                        .isEmpty();
                assertThat(browser.getPageSource()).doesNotContain("Roll back");

                // The viewer plans a change to cart's port, 80 -> 81, as its manifest would say it.
                wait.until(ExpectedConditions.elementToBeClickable(By.linkText("Plan a change")))
                        .click();
                WebElement manifests = wait.until(ExpectedConditions.elementToBeClickable(By.id("plan-manifests")));
                Path cartFile = dir.resolve("shop/cart.yaml");
                String cart = Files.readString(cartFile).replace("port: 80,", "port: 81,");
                ((JavascriptExecutor) browser).executeScript("arguments[0].value = arguments[1]", manifests, cart);
                browser.findElement(By.id("plan-run")).click();
                WebElement planned = wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("plan-diff")));
                assertThat(planned.getText())
                        .startsWith("--- shop version 1\n+++ shop version 1 with 4 objects applied\n")
                        .contains(" Service shop/cart: changed\n")
                        .contains("--dport 81")
                        .contains("--dport 80");
                assertThat(browser.findElement(By.id("plan-summary")).getText()).isEqualTo("2 nodes would change.");
                String plannedHunks =
                        planned.getText().substring(planned.getText().indexOf("\n@@ "));
                shot(browser, "plan");
                accessible(browser, "plan");

                // Then the change is made: version 2 is what the plan said it would be.
                Files.writeString(cartFile, cart);
                browser.get(page + "#/clusters/shop");
                wait.until(ExpectedConditions.presenceOfElementLocated(
                                By.cssSelector("#versions tr[data-version='2'] a")))
                        .click();
                WebElement diff = wait.until(ExpectedConditions.presenceOfElementLocated(By.id("diff")));
                // The api's rendering, as the command line prints it.
                assertThat(diff.getText())
                        .startsWith("--- shop version 1\n+++ shop version 2\n@@ node-a, node-b: changed @@\n");
                assertThat(diff.getText().substring(diff.getText().indexOf("\n@@ ")))
                        .isEqualTo(plannedHunks);
                wait.until(ExpectedConditions.textToBePresentInElementLocated(By.id("rules"), "COMMIT"));
                accessible(browser, "version"); // the node's whole rules: lines wider than the page
                browser.findElement(By.id("rules-search")).sendKeys("10.96.0.");
                wait.until(d -> d.findElement(By.id("rules-count")).getText().matches("\\d+ of \\d+ lines")
                        && d.findElements(By.cssSelector("#rules mark")).stream()
                                .allMatch(m -> m.getText().equals("10.96.0.")));
                assertThat(browser.findElements(By.cssSelector("#rules mark"))).isNotEmpty();
                // The same node in nftables mode: its kube-proxy table, and what version 2 changed in it.
                new Select(browser.findElement(By.id("rules-mode"))).selectByVisibleText("nftables");
                wait.until(ExpectedConditions.textToBePresentInElementLocated(
                        By.id("rules"), "add element ip kube-proxy cluster-ips"));
                WebElement nftDiff = wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("mode-diff")));
                assertThat(nftDiff.getText())
                        .startsWith("--- shop version 1\n+++ shop version 2\n@@ ")
                        .contains(" (nftables mode): changed @@")
                        .contains(" . tcp . 81 ")
                        .contains(" . tcp . 80 ");
                shot(browser, "version");
                browser.findElement(By.linkText("Fleet")).click();
                // A token revoked while the page is open: its next refresh is refused, and the page says so at its
                // login form.
                ((JavascriptExecutor) browser)
                        .executeScript("sessionStorage.setItem('rulesync.token', 'rs_revoked-meanwhile')");
                wait.until(ExpectedConditions.textToBePresentInElementLocated(
                        By.id("login-error"), "Your token is no longer accepted"));

                // An operator. Version 2 bakes on shop's canary (10 minutes here): the operator promotes it.
                login(browser, wait, operator);
                browser.get(page + "#/clusters/shop");
                wait.until(
                        ExpectedConditions.presenceOfElementLocated(By.cssSelector("#versions tr[data-version='2']")));
                if (!browser.findElements(By.cssSelector("button.rollout-step[data-step='promote']"))
                        .isEmpty()) {
                    step(
                            browser,
                            wait,
                            "promote",
                            "Promote the rollout of shop version 2?",
                            "Promote v2",
                            "the canary is fine");
                    wait.until(ExpectedConditions.textToBePresentInElementLocated(
                            By.cssSelector("h2 .badge"), "complete"));
                }
                assertThat(browser.findElements(By.cssSelector("button.rollout-step")))
                        .isEmpty();

                // Then rolls shop back to version 1; the page follows the new version and the nodes by itself.
                WebElement rollback = wait.until(
                        ExpectedConditions.elementToBeClickable(By.cssSelector("button.rollback[data-to='1']")));
                rollback.click();
                wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("confirm")));
                assertThat(browser.findElement(By.id("confirm-title")).getText())
                        .isEqualTo("Roll back shop to version 1?");
                assertThat(browser.findElement(By.id("confirm-ok")).getText()).isEqualTo("Roll back shop to v1");
                browser.findElement(By.id("confirm-ok")).click(); // no reason yet
                assertThat(browser.findElement(By.id("confirm")).isDisplayed())
                        .as("a reason is required")
                        .isTrue();
                browser.findElement(By.id("confirm-reason")).sendKeys("checking the dashboard's rollback");
                shot(browser, "rollback-confirm");
                browser.findElement(By.id("confirm-ok")).click();
                wait.until(ExpectedConditions.invisibilityOfElementLocated(By.id("confirm")));
                wait.until(
                        ExpectedConditions.presenceOfElementLocated(By.cssSelector("#versions tr[data-version='3']")));
                wait.until(ExpectedConditions.textToBePresentInElementLocated(By.tagName("h1"), "pinned to v1"));
                // The rollback's version goes out through shop's canary wave: node-a has it, node-b waits for the bake.
                wait.until(d ->
                        d.findElements(By.cssSelector("#node-grid a.converged")).size() == 1
                                && d.findElement(By.cssSelector("#node-grid a[data-node='node-b']"))
                                        .getAttribute("class")
                                        .equals("behind"));
                shot(browser, "rollout");
                // The operator pauses the rollout, then promotes it: the rest wave opens without waiting for the bake.
                step(
                        browser,
                        wait,
                        "pause",
                        "Pause the rollout of shop version 3?",
                        "Pause v3",
                        "hold it while we look");
                wait.until(ExpectedConditions.textToBePresentInElementLocated(
                        By.cssSelector("h2 .badge.paused"), "paused"));
                assertThat(browser.findElements(By.cssSelector("button.rollout-step[data-step='pause']")))
                        .isEmpty();
                step(browser, wait, "promote", "Promote the rollout of shop version 3?", "Promote v3", "looks fine");
                wait.until(d ->
                        d.findElements(By.cssSelector("#node-grid a.converged")).size() == 2
                                && d.findElement(By.tagName("h1")).getText().contains("v3"));
                assertThat(browser.findElement(By.cssSelector("#versions tr[data-version='3']"))
                                .getText())
                        .contains("rollback to v1 by demo-operator: checking the dashboard's rollback");
                assertThat(browser.findElement(By.id("resume")).isDisplayed()).isTrue();
                shot(browser, "cluster");
                accessible(browser, "cluster, as an operator");

                browser.findElement(By.linkText("Audit")).click();
                WebElement action = wait.until(
                        ExpectedConditions.presenceOfElementLocated(By.cssSelector("#actions tr[data-action]")));
                assertThat(action.getText())
                        .contains("shop")
                        .contains("rollback to v1")
                        .contains("demo-operator")
                        .contains("checking the dashboard's rollback")
                        .contains("done")
                        .contains("v3");
                assertThat(browser.findElement(By.id("rollout-steps")).getText())
                        .contains("paused")
                        .contains("hold it while we look")
                        .contains("promoted")
                        .contains("looks fine");
                shot(browser, "audit");
                accessible(browser, "audit");
                browser.findElement(By.id("logout")).click();
                wait.until(ExpectedConditions.elementToBeClickable(By.id("token")));
                assertThat(((JavascriptExecutor) browser).executeScript("return sessionStorage.length"))
                        .isEqualTo(0L);
            } finally {
                browser.quit();
            }
        } finally {
            DemoRun.drop(db);
        }
    }

    /** An operator's rollout step through its button and the confirmation that names the version. */
    private static void step(
            WebDriver browser, WebDriverWait wait, String verb, String title, String ok, String reason) {
        wait.until(ExpectedConditions.elementToBeClickable(
                        By.cssSelector("button.rollout-step[data-step='" + verb + "']")))
                .click();
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("confirm")));
        assertThat(browser.findElement(By.id("confirm-title")).getText()).isEqualTo(title);
        assertThat(browser.findElement(By.id("confirm-ok")).getText()).isEqualTo(ok);
        browser.findElement(By.id("confirm-reason")).sendKeys(reason);
        browser.findElement(By.id("confirm-ok")).click();
        wait.until(ExpectedConditions.invisibilityOfElementLocated(By.id("confirm")));
    }

    static void login(WebDriver browser, WebDriverWait wait, String token) {
        WebElement field = wait.until(ExpectedConditions.elementToBeClickable(By.id("token")));
        field.clear();
        field.sendKeys(token);
        browser.findElement(By.id("login-submit")).click();
    }

    /** Debian's Chromium through Debian's chromedriver: Selenium Manager never downloads anything here. */
    static WebDriver chromium() {
        ChromeOptions options = new ChromeOptions();
        options.setBinary("/usr/bin/chromium");
        // --no-sandbox: the tests run as root, where Chromium's sandbox refuses to start.
        options.addArguments(
                List.of("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900"));
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(Path.of("/usr/bin/chromedriver").toFile())
                .usingAnyFreePort()
                .build();
        return new ChromeDriver(service, options);
    }

    /**
     * Runs axe-core's rules (WCAG 2 A and AA, and its best practices) in the page as it is now: no violation, of any
     * impact.
     */
    static void accessible(WebDriver browser, String page) throws Exception {
        JavascriptExecutor js = (JavascriptExecutor) browser;
        if (!Boolean.TRUE.equals(js.executeScript("return typeof axe !== 'undefined'"))) {
            try (var in = DashboardBrowserTest.class.getClassLoader().getResourceAsStream("axe.min.js")) {
                assertThat(in)
                        .as("axe.min.js on the test class path (com.deque.html.axe-core:selenium)")
                        .isNotNull();
                js.executeScript(new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8));
            }
        }
        Object found = js.executeAsyncScript("const done = arguments[arguments.length - 1];"
                + "axe.run(document, {resultTypes: ['violations']})"
                + ".then(r => done(r.violations.map(v => v.impact + ' ' + v.id + ': ' + v.help + ' ('"
                + " + v.nodes.map(n => n.target.join(' ')).join(', ') + ')')))"
                + ".catch(e => done(['error ' + e]));");
        assertThat(found).as("axe-core on the " + page + " page").isEqualTo(List.of());
    }

    static void shot(WebDriver browser, String name) throws Exception {
        Files.createDirectories(SHOTS);
        Path png = ((ChromeDriver) browser).getScreenshotAs(OutputType.FILE).toPath();
        Files.copy(png, SHOTS.resolve("dashboard-" + name + ".png"), StandardCopyOption.REPLACE_EXISTING);
    }
}
