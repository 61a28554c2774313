/**
 * The node-agent role: consumes rule deltas, applies them with iptables-restore, verifies and
 * acknowledges the applied version. Not built yet (issue 4); the module exists so that the layout
 * is final.
 */
package io.rulesync.agent;
