-- 006: early stopping and repeats, as SQLite's migration 007 (see migrations/007_intermediate_values.sql):
-- the studies' loop settings and the intermediate values running trials report, one per trial and step.
ALTER TABLE studies ADD COLUMN loop_settings JSON NOT NULL DEFAULT '{}';

CREATE TABLE intermediate_values (
  study_id   TEXT NOT NULL,
  trial_id   INTEGER NOT NULL,
  step       INTEGER NOT NULL CHECK (step >= 0),
  value      DOUBLE PRECISION NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (study_id, trial_id, step),
  FOREIGN KEY (study_id, trial_id) REFERENCES trials(study_id, trial_id) ON DELETE CASCADE
);
CREATE INDEX intermediate_values_step ON intermediate_values(study_id, step);
