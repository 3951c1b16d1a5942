-- 007: trial counts of an INSERT counted once per statement, not once per row. A study imported
-- with 100,000 trials is one INSERT; counted per row, each row's upsert of the same
-- study_trial_counts row had to walk the chain of versions the earlier rows of that transaction
-- left behind, so the import took time quadratic in its trials (40,000 trials: 100 s; counted per
-- statement: 18 s). The loop's commits insert a handful of trials per statement and are counted as
-- before; updates and deletes stay per row (trials_count of 001).
CREATE FUNCTION trials_count_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO study_trial_counts (study_id, state, n)
    SELECT study_id, state, count(*) FROM inserted GROUP BY study_id, state
    ON CONFLICT (study_id, state) DO UPDATE SET n = study_trial_counts.n + EXCLUDED.n;
  RETURN NULL;
END $$;

DROP TRIGGER trials_count_insert ON trials;
CREATE TRIGGER trials_count_insert AFTER INSERT ON trials REFERENCING NEW TABLE AS inserted
  FOR EACH STATEMENT EXECUTE FUNCTION trials_count_inserted();
