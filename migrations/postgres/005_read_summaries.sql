-- 005: SQLite's migration 006 in PostgreSQL: the completion-ordered evaluations with their
-- position, best-so-far value and best-so-far steps, kept by a trigger in the transaction that
-- completes a trial (see migrations/006_read_summaries.sql for the rules), so /best and /history
-- read O(page) rows; the trials list's state index with the trial id; an index of open leases.
-- Loop commits hold the study's row lock (probnes_commit), so a study's rows are never written by
-- two transactions at once.
CREATE TABLE study_evaluations (
  study_id     TEXT NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
  completed_at TEXT COLLATE "C" NOT NULL,
  trial_id     INTEGER NOT NULL,
  idx          INTEGER NOT NULL,
  value        DOUBLE PRECISION NOT NULL,
  best_so_far  DOUBLE PRECISION NOT NULL,
  improved     BOOLEAN NOT NULL,
  PRIMARY KEY (study_id, completed_at, trial_id)
);
CREATE INDEX study_evaluations_idx ON study_evaluations(study_id, idx);
CREATE INDEX study_evaluations_steps ON study_evaluations(study_id, idx) WHERE improved;

INSERT INTO study_evaluations (study_id, completed_at, trial_id, idx, value, best_so_far, improved)
  SELECT study_id, completed_at, trial_id, idx, value, sgn * best_y, prev_y IS NULL OR sgn * value < prev_y
  FROM (
    SELECT t.study_id, COALESCE(t.completed_at, '') AS completed_at, t.trial_id, t.value,
      CASE s.direction WHEN 'maximize' THEN -1.0 ELSE 1.0 END::DOUBLE PRECISION AS sgn,
      ROW_NUMBER() OVER w AS idx,
      MIN(CASE s.direction WHEN 'maximize' THEN -t.value ELSE t.value END) OVER w AS best_y,
      MIN(CASE s.direction WHEN 'maximize' THEN -t.value ELSE t.value END) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_y
    FROM trials t JOIN studies s ON s.id = t.study_id
    WHERE t.state = 'COMPLETED' AND t.value IS NOT NULL
    WINDOW w AS (PARTITION BY t.study_id ORDER BY COALESCE(t.completed_at, '') COLLATE "C", t.trial_id)
  ) e;

CREATE FUNCTION study_evaluations_add() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  sgn DOUBLE PRECISION;
  k TEXT COLLATE "C" := COALESCE(NEW.completed_at, '');
  p_idx INTEGER;
  p_best DOUBLE PRECISION;
  better BOOLEAN;
BEGIN
  SELECT CASE s.direction WHEN 'maximize' THEN -1.0 ELSE 1.0 END INTO sgn FROM studies s WHERE s.id = NEW.study_id;
  -- Rows after it in completion order (none when completions arrive in order).
  UPDATE study_evaluations e SET idx = e.idx + 1,
      improved = e.improved AND sgn * (e.value - NEW.value) < 0,
      best_so_far = CASE WHEN sgn * (NEW.value - e.best_so_far) <= 0 THEN NEW.value ELSE e.best_so_far END
    WHERE e.study_id = NEW.study_id AND (e.completed_at, e.trial_id) > (k, NEW.trial_id);
  SELECT e.idx, e.best_so_far INTO p_idx, p_best FROM study_evaluations e
    WHERE e.study_id = NEW.study_id AND (e.completed_at, e.trial_id) < (k, NEW.trial_id)
    ORDER BY e.completed_at DESC, e.trial_id DESC LIMIT 1;
  better := p_best IS NULL OR sgn * (NEW.value - p_best) < 0;
  INSERT INTO study_evaluations (study_id, completed_at, trial_id, idx, value, best_so_far, improved)
    VALUES (NEW.study_id, k, NEW.trial_id, COALESCE(p_idx, 0) + 1, NEW.value, CASE WHEN better THEN NEW.value ELSE p_best END, better);
  RETURN NULL;
END $$;

CREATE TRIGGER trials_evaluation_insert AFTER INSERT ON trials FOR EACH ROW
  WHEN (NEW.state = 'COMPLETED' AND NEW.value IS NOT NULL) EXECUTE FUNCTION study_evaluations_add();
CREATE TRIGGER trials_evaluation_update AFTER UPDATE OF state ON trials FOR EACH ROW
  WHEN (NEW.state = 'COMPLETED' AND OLD.state IS DISTINCT FROM 'COMPLETED' AND NEW.value IS NOT NULL) EXECUTE FUNCTION study_evaluations_add();

DROP INDEX trials_study_state;
CREATE INDEX trials_study_state_id ON trials(study_id, state, trial_id);
CREATE INDEX trials_active_lease ON trials(lease_expires_at) WHERE state = 'ACTIVE';
