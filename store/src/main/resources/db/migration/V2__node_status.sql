-- What each node runs, from the acks its agent publishes (one row per node, newest ack wins).
--
-- running is the version the node's kernel holds. A FAILED ack does not move it: the node keeps
-- what it had, and the ack says which version that is. last_status is the single "is this node
-- failing now" flag: FAILED until a later ack says APPLIED. last_error, last_error_version and
-- last_error_at are history: an APPLIED ack leaves them in place, so the most recent failure stays
-- visible after the node recovers.
--
-- An ack older (by acked_at, the agent's timestamp) than the stored one changes nothing: Kafka may
-- redeliver, and an agent may publish a retried old ack after a newer one.
CREATE TABLE node_status (
    cluster             text        NOT NULL,
    node                text        NOT NULL,
    running             bigint      NOT NULL CHECK (running >= 0),  -- 0: the node holds no version yet
    last_version        bigint      NOT NULL CHECK (last_version >= 0),  -- the version the last ack is about
    last_status         text        NOT NULL CHECK (last_status IN ('APPLIED', 'FAILED')),
    last_error          text,                  -- the most recent failure's reason; NULL: never failed
    last_error_version  bigint,                -- the version that failure refused
    last_error_at       timestamptz,           -- that failure's ack time
    duration_ms         bigint      NOT NULL,  -- of the last apply, validation included
    rule_count          integer     NOT NULL,  -- rules the node holds after the last apply
    mode                text        NOT NULL,  -- iptables | dry-run | ...
    acked_at            timestamptz NOT NULL,  -- the last ack's "at"
    updated_at          timestamptz NOT NULL,  -- when the compiler stored it
    PRIMARY KEY (cluster, node),
    CHECK ((last_error IS NULL) = (last_error_at IS NULL)),
    CHECK (last_status = 'APPLIED' OR last_error IS NOT NULL)
);
