package io.rulesync.testing.report;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.TestSource;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

/**
 * Prints, when a test JVM has run its tests, one line of what was skipped and why, e.g.
 * {@code rulesync-compiler: skipped 1 test: 1 × needs a kernel with IPVS: ... (IpvsKernelTest)}.
 * Disabled tests and aborted ones (a failed assumption) both count; a skipped class counts its tests.
 *
 * <p>Registered through {@code META-INF/services}, so every module with this one on its test class
 * path reports. Surefire names the module ({@value #MODULE}) and the folder ({@value #FOLDER}) where
 * each module leaves its skips for {@link BuildSkipReport}, the build's line.
 */
public final class SkipReportListener implements TestExecutionListener {
    static final String MODULE = "rulesync.test.module";
    static final String FOLDER = "rulesync.test.skips";

    private final String module;
    private final Optional<Path> folder;
    private final PrintStream out;
    private final SkippedTests skipped = new SkippedTests();
    private final Set<String> started = ConcurrentHashMap.newKeySet();
    private volatile TestPlan plan;

    public SkipReportListener() {
        this(
                System.getProperty(MODULE, "tests"),
                Optional.ofNullable(System.getProperty(FOLDER)).map(Path::of),
                System.out);
    }

    SkipReportListener(String module, Optional<Path> folder, PrintStream out) {
        this.module = module;
        this.folder = folder;
        this.out = out;
    }

    @Override
    public void testPlanExecutionStarted(TestPlan testPlan) {
        plan = testPlan;
    }

    @Override
    public void executionStarted(TestIdentifier id) {
        started.add(id.getUniqueId());
    }

    @Override
    public void executionSkipped(TestIdentifier id, String reason) {
        skipped.add(reason, className(id), notStarted(id));
    }

    @Override
    public void executionFinished(TestIdentifier id, TestExecutionResult result) {
        if (result.getStatus() == TestExecutionResult.Status.ABORTED) {
            String reason = result.getThrowable().map(Throwable::getMessage).orElse(null);
            // A failed assumption's message starts with this; the reason is what follows.
            skipped.add(
                    reason == null ? null : reason.replaceFirst("^Assumption failed: ", ""),
                    className(id),
                    Math.max(1, notStarted(id)));
        }
    }

    @Override
    public void testPlanExecutionFinished(TestPlan testPlan) {
        out.println(module + ": " + skipped.summary());
        folder.ifPresent(f -> skipped.save(f.resolve(module + ".tsv")));
    }

    /**
     * The tests under {@code id} that never started: a skipped class's methods; a parameterized
     * method, whose invocations are not known until it runs, counts once.
     */
    private int notStarted(TestIdentifier id) {
        if (started.contains(id.getUniqueId()) && id.isTest()) {
            return 0;
        }
        Set<TestIdentifier> children = plan == null ? Set.of() : plan.getChildren(id);
        if (children.isEmpty()) {
            return started.contains(id.getUniqueId()) ? 0 : 1;
        }
        return children.stream().mapToInt(this::notStarted).sum();
    }

    private String className(TestIdentifier id) {
        Optional<TestSource> source = id.getSource();
        if (source.isPresent() && source.get() instanceof MethodSource m) {
            return simple(m.getClassName());
        }
        if (source.isPresent() && source.get() instanceof ClassSource c) {
            return simple(c.getClassName());
        }
        return plan == null
                ? id.getDisplayName()
                : plan.getParent(id).map(this::className).orElse(id.getDisplayName());
    }

    /** {@code Outer.Nested} for a nested class. */
    private static String simple(String className) {
        return className.substring(className.lastIndexOf('.') + 1).replace('$', '.');
    }
}
