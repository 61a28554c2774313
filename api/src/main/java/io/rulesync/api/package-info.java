/**
 * The api role: REST for audit history, fleet convergence and rollback. Not built yet (issue 5);
 * the module exists so that the layout is final.
 */
package io.rulesync.api;
