-- Every insert into the outbox is announced on channel rulesync_outbox when its transaction commits, whichever
-- process made it (the compiler's versions and dead letters, the api's operator actions and replays). The compiler's
-- relay waits for it instead of reading the outbox on a short timer. Once per statement: the relay reads every row
-- there is, and PostgreSQL sends a transaction's identical notifications once.
CREATE FUNCTION outbox_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('rulesync_outbox', '');
    RETURN NULL;
END
$$;

CREATE TRIGGER outbox_inserted AFTER INSERT ON outbox FOR EACH STATEMENT EXECUTE FUNCTION outbox_inserted();
