-- Node labels (issue 17): a rollout wave may select nodes by label, so the api needs every node's labels now.
--
-- State, not history: labels other than the zone change no rule, so they make no version (the zone stays in
-- version_node, which every version's node set is read from). The compiler writes the rows of the nodes a batch
-- changed in that batch's transaction, and on taking a partition compares the table with the state it folded,
-- rewrites what differs and says so in one line (an upgrade from before this table, or a write that was lost).
CREATE TABLE cluster_node_label (
    cluster  text  NOT NULL,
    node     text  NOT NULL,
    labels   jsonb NOT NULL,   -- {"key": "value", ...}, every label of the node
    PRIMARY KEY (cluster, node)
);
