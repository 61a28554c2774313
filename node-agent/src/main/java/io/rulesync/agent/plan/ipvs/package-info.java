/**
 * The agent's IPVS planning, apart from the kernel adapters in {@code agent.ipvs}: the ipvsadm commands
 * ({@link io.rulesync.agent.plan.ipvs.IpvsPlan}, with draining) and ipset changes
 * ({@link io.rulesync.agent.plan.ipvs.IpsetPlan}) that move the kernel from what it holds to a version,
 * and the values they plan with. Pure: no host command, file or process (PurePlannersTest).
 */
package io.rulesync.agent.plan.ipvs;
