-- Refused objects (issue 13): what the watchers could not publish, where operators look.
--
-- The current problems of each source of a cluster's objects (a manifest file, or one object an informer
-- saw), one row per problem. This is state, not history: a report replaces its source's rows, a report
-- without problems deletes them, and a problem sync deletes the sources it does not list. The events
-- that carried the reports stay in cluster_event (the history); they never make a version. Written in the
-- same transaction as the compiler's position, so it is always what the events up to there say.
CREATE TABLE cluster_problem (
    cluster      text        NOT NULL,
    source       text        NOT NULL,  -- the report's source: a manifest file's path, or e.g. 'Service shop/web'
    seq          integer     NOT NULL CHECK (seq >= 0),  -- the problem's place in its report
    location     text        NOT NULL,  -- where the problem is, e.g. 'shop/web.yaml (document 2)'; '' when not from a file
    object       text        NOT NULL,  -- e.g. 'Service shop/web'; '' when the object could not be identified
    field        text        NOT NULL,  -- e.g. 'spec.ports[0].port'; '' for the object (or file) as a whole
    message      text        NOT NULL,
    reported_at  timestamptz NOT NULL,  -- when the watcher saw the source broken this way
    PRIMARY KEY (cluster, source, seq)
);

-- Dead letters by the cluster their record was keyed by (the problems endpoint lists a cluster's).
CREATE INDEX dead_letter_by_key ON dead_letter (record_key, id);
