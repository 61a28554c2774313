-- Which history each version belongs to: a hash chained over the version's number, its change and its parent's
-- lineage, written by the compiler (Lineage in the model). After a restore from a backup, the version numbers that
-- come again carry another lineage unless they changed exactly the same, and nodes that ran the lost versions load
-- a snapshot instead of a delta that does not follow what they run.
--
-- Versions stored before this column get a token of their own: unique to the row (a copy of the database keeps
-- it), which the versions after them chain from.
ALTER TABLE version ADD COLUMN lineage text;
UPDATE version SET lineage = md5(cluster || '/' || seq || '/' || created_at::text || '/' || random()::text);
ALTER TABLE version ALTER COLUMN lineage SET NOT NULL;
