/**
 * The agent's iptables planning, apart from the kernel adapters: what a node's rules should be at a version
 * ({@link io.rulesync.agent.plan.NodeView}) and the iptables-restore input that gets the kernel there
 * ({@link io.rulesync.agent.plan.RestorePlan}, {@link io.rulesync.agent.plan.SequenceEdits}). Pure: no
 * host command, file or process (PurePlannersTest); {@code agent.apply} runs what is planned here.
 */
package io.rulesync.agent.plan;
