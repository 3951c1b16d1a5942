-- 003: late results, as SQLite's migration 005: `late` marks a trial whose result arrived after the
-- service had given it up (ABANDONED as superseded or study_completed); see migrations/005_late_results.sql.
-- The commit function of 002 writes it with the other trial updates (a new argument, u_late).
ALTER TABLE trials ADD COLUMN late BOOLEAN NOT NULL DEFAULT false;

DROP FUNCTION probnes_commit(TEXT, INTEGER, BIGINT, INTEGER, INTEGER, JSON, TEXT, INTEGER[], TEXT[], TEXT[], TEXT[], TEXT[],
  DOUBLE PRECISION[], DOUBLE PRECISION[], TEXT[], TEXT[], TEXT[], INTEGER[], TEXT[], TEXT[], JSON[], JSON[],
  DOUBLE PRECISION[], DOUBLE PRECISION[], TEXT[], TEXT[], TEXT, TEXT);

CREATE FUNCTION probnes_commit(
  p_study TEXT, p_expected_revision INTEGER, p_expected_seq BIGINT, p_generation INTEGER,
  p_state_version INTEGER, p_state JSON, p_now TEXT,
  u_ids INTEGER[], u_expected TEXT[], u_state TEXT[], u_client TEXT[], u_lease TEXT[],
  u_value DOUBLE PRECISION[], u_stderr DOUBLE PRECISION[], u_reason TEXT[], u_late BOOLEAN[], u_completed TEXT[],
  n_state TEXT[], n_generation INTEGER[], n_client TEXT[], n_lease TEXT[], n_parameters JSON[], n_point JSON[],
  n_value DOUBLE PRECISION[], n_stderr DOUBLE PRECISION[], n_source TEXT[], n_completed TEXT[],
  p_study_state TEXT, p_study_reason TEXT
) RETURNS TABLE (outcome TEXT, revision INTEGER, first_trial_id INTEGER, lock_ms DOUBLE PRECISION)
LANGUAGE plpgsql AS $$
DECLARE
  v_next INTEGER;
  v_seq BIGINT;
  v_rev INTEGER;
  v_changed INTEGER;
  v_locked TIMESTAMPTZ;
  v_new INTEGER := COALESCE(array_length(n_state, 1), 0);
BEGIN
  -- The study's row lock: the database's per-study lock, held until the caller's statement commits.
  SELECT s.next_trial_id, s.commit_seq INTO v_next, v_seq FROM studies s WHERE s.id = p_study FOR UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'study_not_found'::TEXT, NULL::INTEGER, NULL::INTEGER, NULL::DOUBLE PRECISION;
    RETURN;
  END IF;
  v_locked := clock_timestamp();
  -- Read after the lock: a commit that held it before us is seen (READ COMMITTED, a new snapshot).
  SELECT e.revision INTO v_rev FROM engine_states e WHERE e.study_id = p_study ORDER BY e.revision DESC LIMIT 1;
  IF (p_expected_seq IS NOT NULL AND p_expected_seq <> v_seq) OR v_rev IS DISTINCT FROM p_expected_revision THEN
    RETURN QUERY SELECT 'revision_conflict'::TEXT, NULL::INTEGER, NULL::INTEGER, NULL::DOUBLE PRECISION;
    RETURN;
  END IF;
  v_rev := COALESCE(v_rev, 0);
  IF p_state IS NOT NULL THEN
    v_rev := v_rev + 1;
    INSERT INTO engine_states (study_id, generation, revision, version, state, created_at)
      VALUES (p_study, p_generation, v_rev, p_state_version, p_state, p_now)
      ON CONFLICT (study_id, generation) DO UPDATE SET revision = excluded.revision, version = excluded.version,
        state = excluded.state, created_at = excluded.created_at;
  END IF;
  IF COALESCE(array_length(u_ids, 1), 0) > 0 THEN
    UPDATE trials t SET state = u.state, client_id = u.client_id, lease_expires_at = u.lease, value = u.value,
        stderr = u.stderr, failure_reason = u.reason, late = u.late, completed_at = u.completed, updated_at = p_now
      FROM unnest(u_ids, u_expected, u_state, u_client, u_lease, u_value, u_stderr, u_reason, u_late, u_completed)
        AS u(trial_id, expected_state, state, client_id, lease, value, stderr, reason, late, completed)
      WHERE t.study_id = p_study AND t.trial_id = u.trial_id AND t.state = u.expected_state;
    GET DIAGNOSTICS v_changed = ROW_COUNT;
    IF v_changed <> (SELECT count(DISTINCT x) FROM unnest(u_ids) AS x) THEN
      RAISE EXCEPTION 'a trial of study % changed since it was read', p_study USING ERRCODE = 'PNTC1';
    END IF;
  END IF;
  IF v_new > 0 THEN
    INSERT INTO trials (study_id, trial_id, state, generation, client_id, lease_expires_at, parameters, point, value,
        stderr, failure_reason, source, created_at, completed_at, updated_at)
      SELECT p_study, v_next + n.i - 1, n.state, n.generation, n.client_id, n.lease, n.parameters, n.point, n.value,
          n.stderr, NULL, n.source, p_now, n.completed, p_now
        FROM unnest(n_state, n_generation, n_client, n_lease, n_parameters, n_point, n_value, n_stderr, n_source, n_completed)
          WITH ORDINALITY AS n(state, generation, client_id, lease, parameters, point, value, stderr, source, completed, i);
  END IF;
  UPDATE studies SET generation = p_generation, next_trial_id = next_trial_id + v_new, updated_at = p_now,
      commit_seq = commit_seq + 1, state = COALESCE(p_study_state, state),
      reason = CASE WHEN p_study_state IS NULL THEN reason ELSE p_study_reason END
    WHERE id = p_study;
  RETURN QUERY SELECT 'committed'::TEXT, v_rev, v_next, 1000 * extract(epoch FROM clock_timestamp() - v_locked)::DOUBLE PRECISION;
END $$;
