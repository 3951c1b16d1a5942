-- 009: SQLite's 009 in PostgreSQL: a trial's outcome (value and standard error today) is one JSON
-- column like `parameters`, with only the fields that are set (NULL when none is). The backfill's
-- float8 → JSON text is the shortest text that reads back as the same double (extra_float_digits
-- above 0). No SQL reads a trial's value (orderings and the best read study_evaluations), so no
-- index is needed.
--
-- The loop's commit is no longer a function in the database: src/storage/postgres/commit.ts
-- applies GenerationCommit records in a transaction of TypeScript-built statements (the studies'
-- row locks, the checks, the writes from the column list of src/storage/trial-columns.ts), and
-- the functions of 002-004, as 008 last defined them, go. The trial-count triggers stay: they
-- count, they decide nothing.
DROP FUNCTION probnes_commit_batch;
DROP FUNCTION probnes_commit;

SET LOCAL extra_float_digits = 3;
ALTER TABLE trials ADD COLUMN outcome JSON;
UPDATE trials SET outcome = json_strip_nulls(json_build_object('value', value, 'stderr', stderr))
  WHERE value IS NOT NULL OR stderr IS NOT NULL;
ALTER TABLE trials DROP COLUMN value, DROP COLUMN stderr;
