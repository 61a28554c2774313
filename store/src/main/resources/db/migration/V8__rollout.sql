-- Staged rollout (issue 17): a cluster's policy of waves, where its rollout stands, and what each step did.
--
-- The api decides and writes these (any replica may: a step is stored only if the row's revision is still the
-- one it read, so two replicas deciding at once store one decision); agents are released versions from them.

-- A cluster with a policy rolls its versions out in waves; without one every node gets a version at once.
CREATE TABLE rollout_policy (
    cluster   text        PRIMARY KEY,
    policy    text        NOT NULL,   -- JSON, as the api's RolloutPolicy reads it
    set_by    text        NOT NULL,   -- a token's name, or 'fleet.yaml'
    reason    text        NOT NULL,
    set_at    timestamptz NOT NULL
);

CREATE TABLE rollout (
    cluster         text        PRIMARY KEY,
    version         bigint      NOT NULL CHECK (version > 0),  -- going out (or gone out, when complete)
    stable          bigint      NOT NULL CHECK (stable > 0),   -- what nodes not yet released to keep
    wave            int         NOT NULL CHECK (wave >= 0),    -- the newest wave opened
    wave_opened_at  timestamptz NOT NULL,
    started_at      timestamptz NOT NULL,
    state           text        NOT NULL CHECK (state IN ('rolling', 'paused', 'halted', 'complete')),
    cause           text,                                      -- why it is paused or halted
    revision        bigint      NOT NULL,
    CHECK (stable <= version)
);

-- Every step, as it happened: the audit of rollouts (the controller's own steps have actor 'rollout').
CREATE TABLE rollout_log (
    id        bigserial   PRIMARY KEY,
    cluster   text        NOT NULL,
    version   bigint      NOT NULL,
    at        timestamptz NOT NULL,
    event     text        NOT NULL,
    wave      text,
    actor     text        NOT NULL,
    detail    text        NOT NULL
);
CREATE INDEX rollout_log_by_cluster ON rollout_log (cluster, id);
