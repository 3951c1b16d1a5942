-- 006: what the read routes need, kept with the study so that a read costs O(page), not O(trials).
--
-- study_evaluations: one row per COMPLETED trial with a value, in completion order (completed_at,
-- then trial id: the order of /history), with its 1-based position `idx`, the best value up to and
-- including it (`best_so_far`, in the study's direction) and whether it improved on every earlier
-- one (`improved`: the best-so-far steps; the last of them is the study's best trial). Triggers on
-- trials keep it in the transaction that completes a trial (a loop commit, an import), as 003 keeps
-- the trial counts. A completion that arrives out of completion order (an import, a writer with an
-- earlier clock) is placed where it belongs: the rows after it move up by one and learn its value,
-- which costs nothing when, as usual, there are none. COMPLETED is final, so rows are never removed
-- except with their study.
CREATE TABLE study_evaluations (
  study_id     TEXT NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
  completed_at TEXT NOT NULL,
  trial_id     INTEGER NOT NULL,
  idx          INTEGER NOT NULL,
  value        REAL NOT NULL,
  best_so_far  REAL NOT NULL,
  improved     INTEGER NOT NULL CHECK (improved IN (0, 1)),
  PRIMARY KEY (study_id, completed_at, trial_id)
) WITHOUT ROWID;
CREATE INDEX study_evaluations_idx ON study_evaluations(study_id, idx);
CREATE INDEX study_evaluations_steps ON study_evaluations(study_id, idx) WHERE improved = 1;

-- Existing studies: every completed trial at once, with window functions over completion order.
-- `sgn` turns "better" into "smaller" for either direction.
INSERT INTO study_evaluations (study_id, completed_at, trial_id, idx, value, best_so_far, improved)
  SELECT study_id, completed_at, trial_id, idx, value, sgn * best_y, CASE WHEN prev_y IS NULL OR sgn * value < prev_y THEN 1 ELSE 0 END
  FROM (
    SELECT t.study_id, COALESCE(t.completed_at, '') AS completed_at, t.trial_id, t.value,
      CASE s.direction WHEN 'maximize' THEN -1.0 ELSE 1.0 END AS sgn,
      ROW_NUMBER() OVER w AS idx,
      MIN(CASE s.direction WHEN 'maximize' THEN -t.value ELSE t.value END) OVER w AS best_y,
      MIN(CASE s.direction WHEN 'maximize' THEN -t.value ELSE t.value END) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_y
    FROM trials t JOIN studies s ON s.id = t.study_id
    WHERE t.state = 'COMPLETED' AND t.value IS NOT NULL
    WINDOW w AS (PARTITION BY t.study_id ORDER BY COALESCE(t.completed_at, ''), t.trial_id)
  );

-- The same body for a trial inserted COMPLETED and one that becomes COMPLETED (SQLite triggers
-- cannot share one). First the later rows (if any), then the new row after its predecessor.
CREATE TRIGGER trials_evaluation_insert AFTER INSERT ON trials WHEN NEW.state = 'COMPLETED' AND NEW.value IS NOT NULL BEGIN
  UPDATE study_evaluations SET
      idx = idx + 1,
      improved = improved AND (SELECT CASE direction WHEN 'maximize' THEN -1.0 ELSE 1.0 END FROM studies WHERE id = NEW.study_id) * (value - NEW.value) < 0,
      best_so_far = CASE WHEN (SELECT CASE direction WHEN 'maximize' THEN -1.0 ELSE 1.0 END FROM studies WHERE id = NEW.study_id) * (NEW.value - best_so_far) <= 0
        THEN NEW.value ELSE best_so_far END
    WHERE study_id = NEW.study_id AND (completed_at, trial_id) > (COALESCE(NEW.completed_at, ''), NEW.trial_id);
  INSERT INTO study_evaluations (study_id, completed_at, trial_id, idx, value, best_so_far, improved)
    SELECT NEW.study_id, COALESCE(NEW.completed_at, ''), NEW.trial_id, COALESCE(p.idx, 0) + 1, NEW.value,
      CASE WHEN p.best_so_far IS NULL OR sg.v * (NEW.value - p.best_so_far) < 0 THEN NEW.value ELSE p.best_so_far END,
      CASE WHEN p.best_so_far IS NULL OR sg.v * (NEW.value - p.best_so_far) < 0 THEN 1 ELSE 0 END
    FROM (SELECT CASE direction WHEN 'maximize' THEN -1.0 ELSE 1.0 END AS v FROM studies WHERE id = NEW.study_id) sg
    LEFT JOIN (SELECT idx, best_so_far FROM study_evaluations
                WHERE study_id = NEW.study_id AND (completed_at, trial_id) < (COALESCE(NEW.completed_at, ''), NEW.trial_id)
                ORDER BY completed_at DESC, trial_id DESC LIMIT 1) p ON 1;
END;

CREATE TRIGGER trials_evaluation_update AFTER UPDATE OF state ON trials
  WHEN NEW.state = 'COMPLETED' AND OLD.state IS NOT 'COMPLETED' AND NEW.value IS NOT NULL BEGIN
  UPDATE study_evaluations SET
      idx = idx + 1,
      improved = improved AND (SELECT CASE direction WHEN 'maximize' THEN -1.0 ELSE 1.0 END FROM studies WHERE id = NEW.study_id) * (value - NEW.value) < 0,
      best_so_far = CASE WHEN (SELECT CASE direction WHEN 'maximize' THEN -1.0 ELSE 1.0 END FROM studies WHERE id = NEW.study_id) * (NEW.value - best_so_far) <= 0
        THEN NEW.value ELSE best_so_far END
    WHERE study_id = NEW.study_id AND (completed_at, trial_id) > (COALESCE(NEW.completed_at, ''), NEW.trial_id);
  INSERT INTO study_evaluations (study_id, completed_at, trial_id, idx, value, best_so_far, improved)
    SELECT NEW.study_id, COALESCE(NEW.completed_at, ''), NEW.trial_id, COALESCE(p.idx, 0) + 1, NEW.value,
      CASE WHEN p.best_so_far IS NULL OR sg.v * (NEW.value - p.best_so_far) < 0 THEN NEW.value ELSE p.best_so_far END,
      CASE WHEN p.best_so_far IS NULL OR sg.v * (NEW.value - p.best_so_far) < 0 THEN 1 ELSE 0 END
    FROM (SELECT CASE direction WHEN 'maximize' THEN -1.0 ELSE 1.0 END AS v FROM studies WHERE id = NEW.study_id) sg
    LEFT JOIN (SELECT idx, best_so_far FROM study_evaluations
                WHERE study_id = NEW.study_id AND (completed_at, trial_id) < (COALESCE(NEW.completed_at, ''), NEW.trial_id)
                ORDER BY completed_at DESC, trial_id DESC LIMIT 1) p ON 1;
END;

-- The trials list filtered by state, in trial-id order, reads only the page it returns (the index
-- of 001 on (study_id, state) has no trial id to continue from). It replaces that index, which it
-- covers.
DROP INDEX trials_study_state;
CREATE INDEX trials_study_state_id ON trials(study_id, state, trial_id);
-- Open leases for /metrics: only ACTIVE trials, by expiry, instead of a scan of every trial.
CREATE INDEX trials_active_lease ON trials(lease_expires_at) WHERE state = 'ACTIVE';
