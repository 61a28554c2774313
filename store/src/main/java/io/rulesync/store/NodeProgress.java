package io.rulesync.store;

/**
 * The part of a node's status that decides its standing: the version it runs and whether it is
 * failing now. Read for every node of a cluster at once, so it is kept to three columns.
 */
public record NodeProgress(String node, long running, boolean failing) {}
