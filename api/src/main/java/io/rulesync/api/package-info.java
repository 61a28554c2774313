/**
 * The api role: REST over the stored history. Today: rule snapshots for agents
 * ({@link io.rulesync.api.snapshot}). History, convergence and rollback come with issue 5.
 */
package io.rulesync.api;
