-- One compiler writes a partition of the events topic at a time, whichever consumer group it is in.
--
-- Kafka keeps one consumer per partition inside a group, but knows nothing of a second group (a second deployment
-- with another --group) nor of a frozen member that wakes after its partitions were given away. The row below is
-- the partition's writer: a compiler claims it when Kafka assigns it the partition (at once from its own group,
-- from another group only when that writer has not been heard from for the lease), every batch it commits checks
-- writer and epoch in its own transaction, and a claim raises the epoch. So a writer whose claim was taken
-- commits nothing more and stands down, instead of both rebuilding each other's state.
CREATE TABLE partition_writer (
    topic           text        NOT NULL,
    partition       integer     NOT NULL,
    consumer_group  text        NOT NULL,
    writer          text        NOT NULL,   -- host/pid/random of the compiler process
    epoch           bigint      NOT NULL CHECK (epoch > 0),
    heard_at        timestamptz NOT NULL,   -- the database's clock: its last commit or renewal
    PRIMARY KEY (topic, partition)
);
