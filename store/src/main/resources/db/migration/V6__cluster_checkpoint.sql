-- Checkpoints (issue 15): a rebuild reads a cluster's newest checkpoint and the events stored after it,
-- not its whole history, so taking over a partition costs what the clusters hold, not how old they are.
--
-- One row per cluster, replaced only by a checkpoint of a later event. The compiler writes it after the batch
-- whose transaction named last_event_id, so it stands for exactly the events up to there, and no batch waits
-- for it (a 10,000-Service checkpoint takes about half a second). The body is the cluster's folded state written as
-- events, one per line, starting with a state digest the reader checks: a checkpoint that does not fold
-- back to that digest is ignored, said in one line, and replaced. The events stay in cluster_event: a
-- checkpoint adds a shortcut, it removes nothing.
CREATE TABLE cluster_checkpoint (
    cluster        text        PRIMARY KEY,
    last_event_id  bigint      NOT NULL,  -- cluster_event.id of the last event the checkpoint folds in
    version_seq    bigint      NOT NULL,  -- the cluster's head version when it was written (for operators)
    objects        integer     NOT NULL,  -- Services, EndpointSlices and Nodes it holds
    body           bytea       NOT NULL,  -- gzip of the checkpoint's text (EventCodec lines)
    text_length    integer     NOT NULL,
    created_at     timestamptz NOT NULL
);

-- The rules of each cluster's head version, kept beside the history (issue 15): reading the head (a
-- rebuild, an agent's snapshot) reads this instead of the latest of every key over the whole history,
-- whose cost grows with the number of versions. Written in the transaction that writes the version, so
-- it is always exactly the head's entries; nothing to check when it is read.
CREATE TABLE cluster_head_entry (
    cluster     text     NOT NULL,
    family      text     NOT NULL,
    unit        text     NOT NULL,
    variant     text     NOT NULL,
    hash        char(64) NOT NULL REFERENCES fragment (hash),
    seq         bigint   NOT NULL,             -- the version that set it
    PRIMARY KEY (cluster, family, unit, variant)
);

-- Histories stored before this migration: the head's entries are the latest entry of each key.
INSERT INTO cluster_head_entry (cluster, family, unit, variant, hash, seq)
SELECT cluster, family, unit, variant, hash, seq
FROM (SELECT DISTINCT ON (cluster, family, unit, variant) cluster, family, unit, variant, hash, seq
      FROM version_entry ORDER BY cluster, family, unit, variant, seq DESC) latest
WHERE hash IS NOT NULL;
