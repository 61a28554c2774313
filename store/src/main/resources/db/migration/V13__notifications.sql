-- What operators are told without watching: a rollout started, halted, rolled back or completed, a node failing a
-- version, objects refused. Each is written here by a trigger in the transaction that stored the fact itself
-- (whichever process stored it: the api's rollouts and acks, the compiler's problem reports), so nothing told is
-- lost and nothing is told that was not stored. The api's webhook sender reads the rows after its cursor.
CREATE TABLE notification (
    id       bigserial   PRIMARY KEY,
    at       timestamptz NOT NULL,
    kind     text        NOT NULL,  -- rollout.started | rollout.halted | rollout.rolled-back | rollout.completed | node.failed | objects.refused
    cluster  text        NOT NULL,
    version  bigint,                -- the version concerned, where there is one
    node     text,                  -- node.failed only
    detail   text        NOT NULL
);
CREATE INDEX notification_by_time ON notification (at);

-- Where each webhook destination has got to (by URL), locked by the replica sending to it: one sender per
-- destination at a time, whatever the number of api replicas. A destination seen for the first time starts at the
-- newest row: a new webhook is told what happens from then on, not the history.
CREATE TABLE webhook_cursor (
    destination  text   PRIMARY KEY,
    last_id      bigint NOT NULL
);

-- Deliveries given up after their retries: the audit of what a receiver was not told.
CREATE TABLE webhook_failure (
    id               bigserial   PRIMARY KEY,
    notification_id  bigint      NOT NULL,
    destination      text        NOT NULL,
    cluster          text        NOT NULL,
    kind             text        NOT NULL,
    attempts         integer     NOT NULL,
    error            text        NOT NULL,
    failed_at        timestamptz NOT NULL
);
CREATE INDEX webhook_failure_by_cluster ON webhook_failure (cluster, id);

CREATE FUNCTION notify_rollout() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO notification (at, kind, cluster, version, detail)
    VALUES (NEW.at, 'rollout.' || CASE NEW.event WHEN 'rollback-requested' THEN 'rolled-back' ELSE NEW.event END,
            NEW.cluster, NEW.version, coalesce('wave ' || NEW.wave || ': ', '') || NEW.detail);
    RETURN NULL;
END
$$;
CREATE TRIGGER rollout_notify AFTER INSERT ON rollout_log FOR EACH ROW
    WHEN (NEW.event IN ('started', 'halted', 'completed', 'rollback-requested')) EXECUTE FUNCTION notify_rollout();

-- A node's failure is told once per version it refused, not at every ack that repeats it.
CREATE FUNCTION notify_node_failed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO notification (at, kind, cluster, version, node, detail)
    VALUES (NEW.updated_at, 'node.failed', NEW.cluster, NEW.last_error_version, NEW.node, NEW.last_error);
    RETURN NULL;
END
$$;
CREATE TRIGGER node_failed_inserted AFTER INSERT ON node_status FOR EACH ROW
    WHEN (NEW.last_status = 'FAILED') EXECUTE FUNCTION notify_node_failed();
CREATE TRIGGER node_failed_updated AFTER UPDATE ON node_status FOR EACH ROW
    WHEN (NEW.last_status = 'FAILED' AND OLD.last_error_version IS DISTINCT FROM NEW.last_error_version)
    EXECUTE FUNCTION notify_node_failed();

-- A source's report is told once, by its first problem (the compiler replaces a source's rows only when its report
-- changed); the api's problems endpoint lists the rest.
CREATE FUNCTION notify_problems() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO notification (at, kind, cluster, detail)
    VALUES (NEW.reported_at, 'objects.refused', NEW.cluster,
            NEW.source || ': ' || CASE WHEN NEW.object = '' THEN '' ELSE NEW.object || ': ' END
                || CASE WHEN NEW.field = '' THEN '' ELSE NEW.field || ': ' END || NEW.message);
    RETURN NULL;
END
$$;
CREATE TRIGGER problems_notify AFTER INSERT ON cluster_problem FOR EACH ROW WHEN (NEW.seq = 0) EXECUTE FUNCTION notify_problems();
