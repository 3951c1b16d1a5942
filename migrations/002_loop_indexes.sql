-- 002: what the optimisation loop reads on every request, without scanning a study's history.
-- The suggested trials of the current generation (its joint batch and extras): by generation and
-- source, so that a study with thousands of external or older trials reads only the few it needs.
CREATE INDEX trials_study_generation ON trials(study_id, generation, source);
