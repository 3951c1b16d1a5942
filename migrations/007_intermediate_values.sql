-- 007: early stopping and repeats. `loop_settings` holds a study's loop settings as the service
-- writes them ({"allow_repeats": bool, "stopping": {...} | null}); '{}' means the defaults, so the
-- studies written before this migration keep the behaviour they had, except that repeats are now
-- redrawn (allow_repeats defaults to false).
-- intermediate_values: what a running trial reported at each step (one value per step; a report
-- for a step already stored is answered from the stored value, never overwrites it).
ALTER TABLE studies ADD COLUMN loop_settings TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(loop_settings));

CREATE TABLE intermediate_values (
  study_id   TEXT NOT NULL,
  trial_id   INTEGER NOT NULL,
  step       INTEGER NOT NULL CHECK (step >= 0),
  value      REAL NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (study_id, trial_id, step),
  FOREIGN KEY (study_id, trial_id) REFERENCES trials(study_id, trial_id) ON DELETE CASCADE
) WITHOUT ROWID;
-- The stopping rule reads every trial's value at one step.
CREATE INDEX intermediate_values_step ON intermediate_values(study_id, step);
