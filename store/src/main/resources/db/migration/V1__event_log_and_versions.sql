-- rulesync storage. Append-only: never edit an applied migration, add a new one.
--
-- A version of a cluster stores only what changed since its parent: the fragment entries that were
-- added, replaced or removed (a NULL hash), the nodes that came, went or changed zone, and the
-- settings. Fragment bodies are content-addressed and stored once, compressed. The full rules of any
-- version are the latest entry per key at or before it.

CREATE TABLE cluster_head (
    cluster     text   PRIMARY KEY,
    seq         bigint NOT NULL CHECK (seq > 0)
);

CREATE TABLE version (
    cluster         text        NOT NULL,
    seq             bigint      NOT NULL,
    parent_seq      bigint,
    created_at      timestamptz NOT NULL,
    cause           text        NOT NULL,  -- JSON: which events (or which operator action) made it
    settings        text        NOT NULL,  -- JSON: the cluster's proxy settings at this version
    fragments_changed integer   NOT NULL,
    nodes_changed   integer     NOT NULL,
    PRIMARY KEY (cluster, seq),
    -- gap-free: every version but the first extends the one before it
    CHECK ((seq = 1 AND parent_seq IS NULL) OR parent_seq = seq - 1),
    FOREIGN KEY (cluster, parent_seq) REFERENCES version (cluster, seq)
);

CREATE TABLE fragment (
    hash        char(64) PRIMARY KEY,      -- sha256 of the canonical text
    body        bytea    NOT NULL,         -- gzip of the canonical text
    text_length integer  NOT NULL
);

CREATE TABLE version_entry (
    cluster     text     NOT NULL,
    seq         bigint   NOT NULL,
    family      text     NOT NULL,         -- ipv4 | ipv6
    unit        text     NOT NULL,         -- ~fixed | namespace/name:port/PROTOCOL
    variant     text     NOT NULL,         -- * | node=NAME | zone=ZONE | ...
    hash        char(64) REFERENCES fragment (hash),  -- NULL: removed at this version
    PRIMARY KEY (cluster, family, unit, variant, seq),
    FOREIGN KEY (cluster, seq) REFERENCES version (cluster, seq)
);
CREATE INDEX version_entry_by_version ON version_entry (cluster, seq);

CREATE TABLE version_node (
    cluster     text   NOT NULL,
    seq         bigint NOT NULL,
    node        text   NOT NULL,
    zone        text,                      -- NULL: the node left at this version
    PRIMARY KEY (cluster, node, seq),
    FOREIGN KEY (cluster, seq) REFERENCES version (cluster, seq)
);
CREATE INDEX version_node_by_version ON version_node (cluster, seq);

-- The audit trail: every event as received, in log order, and the version it led to (if any).
CREATE TABLE cluster_event (
    id              bigserial   PRIMARY KEY,
    cluster         text        NOT NULL,
    topic           text        NOT NULL,
    partition       integer     NOT NULL,
    kafka_offset    bigint      NOT NULL,
    event_type      text        NOT NULL,  -- upsert | delete | sync | settings
    kind            text,
    object_key      text,
    resource_version text,
    observed_at     timestamptz NOT NULL,
    received_at     timestamptz NOT NULL,
    payload         text        NOT NULL,
    version_seq     bigint,
    UNIQUE (topic, partition, kafka_offset)
);
CREATE INDEX cluster_event_by_cluster ON cluster_event (cluster, id);
CREATE INDEX cluster_event_by_partition ON cluster_event (topic, partition, cluster);

-- Records that could not be used, with the reason; also published to the dead-letter topic.
CREATE TABLE dead_letter (
    id              bigserial   PRIMARY KEY,
    topic           text        NOT NULL,
    partition       integer     NOT NULL,
    kafka_offset    bigint      NOT NULL,
    record_key      text,
    payload         text,
    reason          text        NOT NULL,
    received_at     timestamptz NOT NULL,
    UNIQUE (topic, partition, kafka_offset)
);

-- Where each consumer group is in each partition: committed with what the records produced.
CREATE TABLE consumer_position (
    consumer_group  text    NOT NULL,
    topic           text    NOT NULL,
    partition       integer NOT NULL,
    next_offset     bigint  NOT NULL,
    PRIMARY KEY (consumer_group, topic, partition)
);

-- Messages to publish, written in the same transaction as what they announce (no dual write).
CREATE TABLE outbox (
    id          bigserial   PRIMARY KEY,
    topic       text        NOT NULL,
    record_key  text        NOT NULL,
    payload     text        NOT NULL,
    created_at  timestamptz NOT NULL
);
