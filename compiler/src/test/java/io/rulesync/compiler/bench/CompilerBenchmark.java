package io.rulesync.compiler.bench;

import io.rulesync.compiler.iptables.IptablesCompiler;
import io.rulesync.compiler.iptables.NodeRules;
import io.rulesync.compiler.iptables.ProxySettings;
import io.rulesync.model.cluster.Cidr;
import io.rulesync.model.cluster.ClusterState;
import io.rulesync.model.cluster.IpFamily;
import io.rulesync.model.cluster.NamespacedName;
import io.rulesync.testsupport.cluster.SyntheticCluster;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The compiler's hot paths at the Kubernetes scalability ceiling (10,000 Services, 10 endpoints
 * each): a full compile and render for one node, and the recompile after one endpoint changed.
 * Run with {@code bench/jmh} (see BENCHMARKS.md).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xmx4g"})
@Warmup(iterations = 8, time = 3)
@Measurement(iterations = 5, time = 3)
public class CompilerBenchmark {
    @Param({"10000"})
    public int services;

    @Param({"10"})
    public int endpoints;

    private ClusterState state;
    private ClusterState changed;
    private Set<NamespacedName> changedNames;
    private NodeRules compiled;
    private ProxySettings settings;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        settings = ProxySettings.defaults(IpFamily.IPV4).withClusterCidrs(List.of(Cidr.parse("10.64.0.0/10")));
        state = SyntheticCluster.build(services, endpoints);
        int victim = services / 2;
        changed = state.withEndpointSlice(SyntheticCluster.slice(victim, endpoints, 1));
        changedNames = Set.of(SyntheticCluster.serviceName(victim));
        compiled = IptablesCompiler.compile(state, SyntheticCluster.NODE, settings);
    }

    @Benchmark
    @OutputTimeUnit(TimeUnit.MILLISECONDS)
    public String fullCompileAndRender() throws Exception {
        return IptablesCompiler.compile(state, SyntheticCluster.NODE, settings).render();
    }

    /** The first compile in a fresh JVM (what one CLI run pays): no JIT warm-up, five JVMs. */
    @Benchmark
    @BenchmarkMode(Mode.SingleShotTime)
    @Warmup(iterations = 0)
    @Measurement(iterations = 1)
    @Fork(
            value = 5,
            jvmArgsAppend = {"-Xmx4g"})
    @OutputTimeUnit(TimeUnit.MILLISECONDS)
    public String coldFullCompileAndRender() throws Exception {
        return IptablesCompiler.compile(state, SyntheticCluster.NODE, settings).render();
    }

    @Benchmark
    @OutputTimeUnit(TimeUnit.MILLISECONDS)
    public NodeRules fullCompile() throws Exception {
        return IptablesCompiler.compile(state, SyntheticCluster.NODE, settings);
    }

    @Benchmark
    @OutputTimeUnit(TimeUnit.MILLISECONDS)
    public String renderOnly() {
        return compiled.render();
    }

    @Benchmark
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public NodeRules recompileOneEndpointChange() throws Exception {
        return compiled.update(changed, changedNames);
    }
}
