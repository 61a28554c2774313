-- A stored position belongs to one log (issue 12).
--
-- Kafka numbers a partition's records from 0 again when its topic is deleted and created again, or on
-- another Kafka cluster, so an offset alone cannot tell which log it was taken from. The compiler keeps,
-- with each position, the identity of its log: Kafka's topic id, where the log started and how far it
-- was seen to reach. When the live log is not that log, or lost records that were not read yet, the
-- compiler resumes at what the live log holds, in a new epoch when offsets may repeat, and asks the
-- watchers for a resync.
ALTER TABLE consumer_position
    ADD COLUMN log_epoch      integer NOT NULL DEFAULT 0 CHECK (log_epoch >= 0),
    ADD COLUMN topic_id       text,    -- NULL: stored before rulesync recorded it
    ADD COLUMN log_start      bigint,  -- the log's first offset when last seen
    ADD COLUMN log_high_water bigint;  -- the highest end offset the log was seen to have (>= next_offset)

-- Events and dead letters are identified by their place in a log: the epoch says which log.
ALTER TABLE cluster_event ADD COLUMN log_epoch integer NOT NULL DEFAULT 0;
ALTER TABLE cluster_event DROP CONSTRAINT cluster_event_topic_partition_kafka_offset_key,
    ADD CONSTRAINT cluster_event_log_place UNIQUE (topic, partition, log_epoch, kafka_offset);
ALTER TABLE dead_letter ADD COLUMN log_epoch integer NOT NULL DEFAULT 0;
ALTER TABLE dead_letter DROP CONSTRAINT dead_letter_topic_partition_kafka_offset_key,
    ADD CONSTRAINT dead_letter_log_place UNIQUE (topic, partition, log_epoch, kafka_offset);

-- An operator action never stays pending for good: one the compiler has not carried out within a bounded
-- time (its request was lost with a replaced log, or no compiler ran) is 'expired', with the reason in
-- outcome, and the cluster accepts the next action.
ALTER TABLE operator_action DROP CONSTRAINT operator_action_status_check,
    ADD CONSTRAINT operator_action_status_check CHECK (status IN ('pending', 'done', 'rejected', 'expired'));
ALTER TABLE operator_action DROP CONSTRAINT operator_action_check2,
    ADD CONSTRAINT operator_action_outcome_check CHECK ((status IN ('rejected', 'expired')) = (outcome IS NOT NULL));
CREATE INDEX operator_action_pending ON operator_action (requested_at) WHERE status = 'pending';
