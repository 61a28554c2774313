-- Operator actions (rollback, resume): the audit log of who asked for what, why, and what came of it.
--
-- The api inserts a row as 'pending' together with an outbox row that carries the request to the
-- cluster's partition of the events topic; the compiler carries it out in order with the watched
-- changes and, in the same transaction as the version it produced, marks it 'done' (or 'rejected',
-- with the reason). At most one action per cluster is pending: a second request racing the first
-- fails on the unique index, and the api answers 409.
--
-- Whether a cluster is pinned follows from this table alone: it is pinned when its latest done
-- action (by the version it produced) is a rollback.
CREATE TABLE operator_action (
    id              bigserial   PRIMARY KEY,
    cluster         text        NOT NULL,
    action          text        NOT NULL CHECK (action IN ('rollback', 'resume')),
    to_version      bigint      CHECK (to_version > 0),   -- rollback only: the version whose rules to republish
    actor           text        NOT NULL,                 -- the api token's name
    reason          text        NOT NULL,
    requested_at    timestamptz NOT NULL,
    status          text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'done', 'rejected')),
    result_version  bigint,                               -- done only: the version the action produced
    outcome         text,                                 -- rejected only: why
    completed_at    timestamptz,
    CHECK ((action = 'rollback') = (to_version IS NOT NULL)),
    CHECK ((status = 'done') = (result_version IS NOT NULL)),
    CHECK ((status = 'rejected') = (outcome IS NOT NULL)),
    CHECK ((status = 'pending') = (completed_at IS NULL))
);
CREATE UNIQUE INDEX operator_action_one_pending ON operator_action (cluster) WHERE status = 'pending';
CREATE INDEX operator_action_by_cluster ON operator_action (cluster, id);
CREATE INDEX operator_action_done ON operator_action (cluster, result_version) WHERE status = 'done';

-- The events that went into a version (the network programming latency starts at the earliest).
CREATE INDEX cluster_event_by_version ON cluster_event (cluster, version_seq) WHERE version_seq IS NOT NULL;
