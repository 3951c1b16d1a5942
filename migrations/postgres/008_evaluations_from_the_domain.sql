-- 008: SQLite's migration 008 in PostgreSQL: the evaluation rows of 005 are computed by the service
-- (src/domain/results) and written in the commit that completes a trial, and by an import; the
-- trigger that computed them here, and its function, go. The commit functions of 003 and 004 take
-- the rows as arguments (e_ arrays: completion key, position, value, best so far, step) and write
-- them as given after their checks, under the study's row lock, in the commit's transaction. They
-- still decide nothing about values: a commit's rows were computed from the study at the commit
-- count the function checks (p_expected_seq), and one without that guard may not carry rows.
DROP TRIGGER trials_evaluation_insert ON trials;
DROP TRIGGER trials_evaluation_update ON trials;
DROP FUNCTION study_evaluations_add();

DROP FUNCTION probnes_commit_batch(TEXT[], INTEGER[], BIGINT[], INTEGER[], INTEGER[], JSON[], TEXT[], TEXT[], TEXT[],
  INTEGER[], INTEGER[], INTEGER[], TEXT[], TEXT[], TEXT[], TEXT[], DOUBLE PRECISION[], DOUBLE PRECISION[], TEXT[], BOOLEAN[], TEXT[],
  INTEGER[], INTEGER[], TEXT[], INTEGER[], TEXT[], TEXT[], JSON[], JSON[], DOUBLE PRECISION[], DOUBLE PRECISION[], TEXT[], TEXT[]);
DROP FUNCTION probnes_commit(TEXT, INTEGER, BIGINT, INTEGER, INTEGER, JSON, TEXT, INTEGER[], TEXT[], TEXT[], TEXT[], TEXT[],
  DOUBLE PRECISION[], DOUBLE PRECISION[], TEXT[], BOOLEAN[], TEXT[], TEXT[], INTEGER[], TEXT[], TEXT[], JSON[], JSON[],
  DOUBLE PRECISION[], DOUBLE PRECISION[], TEXT[], TEXT[], TEXT, TEXT);

CREATE FUNCTION probnes_commit(
  p_study TEXT, p_expected_revision INTEGER, p_expected_seq BIGINT, p_generation INTEGER,
  p_state_version INTEGER, p_state JSON, p_now TEXT,
  u_ids INTEGER[], u_expected TEXT[], u_state TEXT[], u_client TEXT[], u_lease TEXT[],
  u_value DOUBLE PRECISION[], u_stderr DOUBLE PRECISION[], u_reason TEXT[], u_late BOOLEAN[], u_completed TEXT[],
  n_state TEXT[], n_generation INTEGER[], n_client TEXT[], n_lease TEXT[], n_parameters JSON[], n_point JSON[],
  n_value DOUBLE PRECISION[], n_stderr DOUBLE PRECISION[], n_source TEXT[], n_completed TEXT[],
  p_study_state TEXT, p_study_reason TEXT,
  e_completed TEXT[], e_trial INTEGER[], e_idx INTEGER[], e_value DOUBLE PRECISION[], e_best DOUBLE PRECISION[], e_improved BOOLEAN[]
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
  IF p_expected_seq IS NULL AND COALESCE(array_length(e_trial, 1), 0) > 0 THEN
    RAISE EXCEPTION 'a commit with evaluation rows must give its expected commit count';
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
  IF COALESCE(array_length(e_trial, 1), 0) > 0 THEN
    INSERT INTO study_evaluations (study_id, completed_at, trial_id, idx, value, best_so_far, improved)
      SELECT p_study, e.* FROM unnest(e_completed, e_trial, e_idx, e_value, e_best, e_improved) AS e
      ON CONFLICT (study_id, completed_at, trial_id) DO UPDATE SET idx = excluded.idx, value = excluded.value,
        best_so_far = excluded.best_so_far, improved = excluded.improved;
  END IF;
  UPDATE studies SET generation = p_generation, next_trial_id = next_trial_id + v_new, updated_at = p_now,
      commit_seq = commit_seq + 1, state = COALESCE(p_study_state, state),
      reason = CASE WHEN p_study_state IS NULL THEN reason ELSE p_study_reason END
    WHERE id = p_study;
  RETURN QUERY SELECT 'committed'::TEXT, v_rev, v_next, 1000 * extract(epoch FROM clock_timestamp() - v_locked)::DOUBLE PRECISION;
END $$;

-- 004's batch with each commit's evaluation rows: e_from/e_count index the e_ arrays as u_ and n_.
CREATE FUNCTION probnes_commit_batch(
  p_study TEXT[], p_expected_revision INTEGER[], p_expected_seq BIGINT[], p_generation INTEGER[],
  p_state_version INTEGER[], p_state JSON[], p_now TEXT[], p_study_state TEXT[], p_study_reason TEXT[],
  u_from INTEGER[], u_count INTEGER[],
  u_ids INTEGER[], u_expected TEXT[], u_state TEXT[], u_client TEXT[], u_lease TEXT[],
  u_value DOUBLE PRECISION[], u_stderr DOUBLE PRECISION[], u_reason TEXT[], u_late BOOLEAN[], u_completed TEXT[],
  n_from INTEGER[], n_count INTEGER[],
  n_state TEXT[], n_generation INTEGER[], n_client TEXT[], n_lease TEXT[], n_parameters JSON[], n_point JSON[],
  n_value DOUBLE PRECISION[], n_stderr DOUBLE PRECISION[], n_source TEXT[], n_completed TEXT[],
  e_from INTEGER[], e_count INTEGER[],
  e_completed TEXT[], e_trial INTEGER[], e_idx INTEGER[], e_value DOUBLE PRECISION[], e_best DOUBLE PRECISION[], e_improved BOOLEAN[]
) RETURNS TABLE (i INTEGER, outcome TEXT, revision INTEGER, first_trial_id INTEGER, lock_ms DOUBLE PRECISION)
LANGUAGE plpgsql AS $$
DECLARE
  k INTEGER;
  a INTEGER;
  b INTEGER;
  c INTEGER;
  d INTEGER;
  f INTEGER;
  g INTEGER;
  o_outcome TEXT;
  o_revision INTEGER;
  o_first INTEGER;
  o_lock DOUBLE PRECISION;
  v_outcome TEXT[] := '{}';
  v_revision INTEGER[] := '{}';
  v_first INTEGER[] := '{}';
  v_lock DOUBLE PRECISION[] := '{}';
  v_done TIMESTAMPTZ[] := '{}';
BEGIN
  FOR k IN 1 .. COALESCE(array_length(p_study, 1), 0) LOOP
    a := u_from[k];
    b := u_from[k] + u_count[k] - 1;
    c := n_from[k];
    d := n_from[k] + n_count[k] - 1;
    f := e_from[k];
    g := e_from[k] + e_count[k] - 1;
    IF u_count[k] = 0 THEN
      -- No guarded update, so no PNTC1: no subtransaction needed.
      SELECT x.outcome, x.revision, x.first_trial_id, x.lock_ms INTO o_outcome, o_revision, o_first, o_lock FROM probnes_commit(p_study[k], p_expected_revision[k], p_expected_seq[k], p_generation[k],
        p_state_version[k], p_state[k], p_now[k],
        '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}',
        n_state[c:d], n_generation[c:d], n_client[c:d], n_lease[c:d], n_parameters[c:d], n_point[c:d],
        n_value[c:d], n_stderr[c:d], n_source[c:d], n_completed[c:d], p_study_state[k], p_study_reason[k],
        e_completed[f:g], e_trial[f:g], e_idx[f:g], e_value[f:g], e_best[f:g], e_improved[f:g]) AS x;
    ELSE
      BEGIN
        SELECT x.outcome, x.revision, x.first_trial_id, x.lock_ms INTO o_outcome, o_revision, o_first, o_lock FROM probnes_commit(p_study[k], p_expected_revision[k], p_expected_seq[k], p_generation[k],
          p_state_version[k], p_state[k], p_now[k],
          u_ids[a:b], u_expected[a:b], u_state[a:b], u_client[a:b], u_lease[a:b], u_value[a:b], u_stderr[a:b],
          u_reason[a:b], u_late[a:b], u_completed[a:b],
          n_state[c:d], n_generation[c:d], n_client[c:d], n_lease[c:d], n_parameters[c:d], n_point[c:d],
          n_value[c:d], n_stderr[c:d], n_source[c:d], n_completed[c:d], p_study_state[k], p_study_reason[k],
          e_completed[f:g], e_trial[f:g], e_idx[f:g], e_value[f:g], e_best[f:g], e_improved[f:g]) AS x;
      EXCEPTION WHEN SQLSTATE 'PNTC1' THEN
        o_outcome := 'trial_conflict';
        o_revision := NULL;
        o_first := NULL;
        o_lock := NULL;
      END;
    END IF;
    v_outcome := v_outcome || o_outcome;
    v_revision := v_revision || o_revision;
    v_first := v_first || o_first;
    v_lock := v_lock || o_lock;
    v_done := v_done || clock_timestamp();
  END LOOP;
  RETURN QUERY SELECT o.k::INTEGER, v_outcome[o.k], v_revision[o.k], v_first[o.k],
      v_lock[o.k] + 1000 * extract(epoch FROM clock_timestamp() - v_done[o.k])::DOUBLE PRECISION
    FROM generate_series(1, COALESCE(array_length(p_study, 1), 0)) AS o(k);
END $$;
