package io.rulesync.agent.ipvs;

import java.util.List;

/** The kernel's IPVS table: what it holds, and changes to it. */
public interface IpvsKernel {

    /** Every virtual server (of both families) with its real servers and their connection counts. */
    List<KernelVirtualServer> list() throws IpvsApplyException;

    /**
     * Applies the commands in order. Like {@code ipvsadm -R}, a refused command does not stop the
     * ones after it; the exception names the refused ones.
     */
    void run(List<IpvsCommand> commands) throws IpvsApplyException;
}
