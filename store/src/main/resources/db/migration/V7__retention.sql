-- Retention (issue 15): a cluster's history is kept back to a floor version, and what is older is removed.
--
-- The oldest kept version holds its whole rules and nodes (the entries in force there are written at its
-- seq), so every kept version reads back as before: the latest entry of each key at or before it. Its
-- parent_seq still names the version it followed, which may be gone: that reference is no longer a key.
ALTER TABLE version DROP CONSTRAINT version_cluster_parent_seq_fkey;

-- Unreferenced fragments are found by hash, and the age limit finds its floor by creation time.
CREATE INDEX version_entry_by_hash ON version_entry (hash);
CREATE INDEX cluster_head_entry_by_hash ON cluster_head_entry (hash);
CREATE INDEX version_by_created ON version (cluster, created_at);

-- What retention removed from each cluster, for operators (the api's 410 names what remains) and for a
-- rebuild: events_before > 0 means the log no longer starts at the cluster's first event, so only a
-- checkpoint can stand for what was removed.
CREATE TABLE cluster_retention (
    cluster           text        PRIMARY KEY,
    oldest_version    bigint      NOT NULL CHECK (oldest_version > 0),  -- versions below it were removed
    events_before     bigint      NOT NULL DEFAULT 0,                   -- cluster_event ids below it were removed
    versions_removed  bigint      NOT NULL DEFAULT 0,                   -- in total, over every pass
    events_removed    bigint      NOT NULL DEFAULT 0,
    pruned_at         timestamptz NOT NULL
);
