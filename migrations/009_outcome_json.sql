-- 009: a trial's outcome, what the user reported for it (its value and standard error today), is
-- one JSON column like `parameters`, so that what an outcome holds can grow (several objectives,
-- constraints) without a migration: src/storage/trial-columns.ts lists its fields. Only the fields
-- that are set are stored; NULL when none is. The backfill writes each REAL with SQLite's JSON
-- number text, which reads back as the same double. No SQL reads a trial's value (the evaluation
-- rows of study_evaluations, written by the service, carry the value that orderings and the best
-- read), so no index is needed.
ALTER TABLE trials ADD COLUMN outcome TEXT CHECK (outcome IS NULL OR json_valid(outcome));
UPDATE trials SET outcome = CASE
    WHEN stderr IS NULL THEN json_object('value', value)
    WHEN value IS NULL THEN json_object('stderr', stderr)
    ELSE json_object('value', value, 'stderr', stderr)
  END
  WHERE value IS NOT NULL OR stderr IS NOT NULL;
ALTER TABLE trials DROP COLUMN value;
ALTER TABLE trials DROP COLUMN stderr;
