package io.rulesync.agent.ipvs;

import io.rulesync.agent.plan.ipvs.IpvsCommand;
import io.rulesync.agent.plan.ipvs.KernelVirtualServer;
import io.rulesync.agent.plan.ipvs.ServiceId;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** The kernel's IPVS table: what it holds, and changes to it. */
public interface IpvsKernel {
    /**
     * The kernel settings IPVS mode needs, as kube-proxy sets them: IPVS connections tracked by conntrack (so that the
     * node masquerades them: hairpin, NodePorts), connections to a removed real server ended on their next packet, and
     * persistence templates of a quiesced one expired. Set at every full apply: someone may have reset them.
     */
    default void prepare() throws IpvsApplyException {}

    /**
     * Every virtual server (of both families) with its real servers and their connection counts, in order of service,
     * and their real servers in order of address and port.
     */
    List<KernelVirtualServer> list() throws IpvsApplyException;

    /**
     * The kernel's virtual servers among {@code services}, absent ones left out: what a change of a
     * few Services needs to read, where {@link #list()} reads 100,000 real servers at 10,000 Services.
     */
    default List<KernelVirtualServer> list(Collection<ServiceId> services) throws IpvsApplyException {
        Set<ServiceId> wanted = new HashSet<>(services);
        return list().stream().filter(k -> wanted.contains(k.service())).toList();
    }

    /**
     * Applies the commands in order. Like {@code ipvsadm -R}, a refused command does not stop the
     * ones after it; the exception names the refused ones.
     */
    void run(List<IpvsCommand> commands) throws IpvsApplyException;
}
