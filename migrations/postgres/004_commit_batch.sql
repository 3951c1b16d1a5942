-- 004: several loop commits (of different studies) in one statement and so one transaction: one round
-- trip and one WAL flush for all of them, the way SQLite's writer thread groups the commits that queue
-- while it writes. A replica sends the commits that queued while its previous batch was in flight
-- (PostgresStorage.commitGeneration); measured on two cores, a transaction's COMMIT was about half of a
-- lone commit's database CPU. Each commit is probnes_commit of 003 with its own arguments, so its
-- checks and outcome are exactly those of a lone call; one whose guarded trial update finds another
-- state (PNTC1) is rolled back alone (a subtransaction) and answers 'trial_conflict', the others stand.
-- The per-commit arguments are arrays indexed by commit; the trial arrays are the commits' own arrays
-- concatenated, commit i's being [u_from[i], u_from[i] + u_count[i]) (and n_ likewise), 1-based.
-- Callers order the commits by study id, so two batches lock their studies' rows in the same order
-- and never deadlock. lock_ms of each commit runs from its row lock's grant to the batch's end (the
-- locks are held until the batch's transaction commits).
CREATE FUNCTION probnes_commit_batch(
  p_study TEXT[], p_expected_revision INTEGER[], p_expected_seq BIGINT[], p_generation INTEGER[],
  p_state_version INTEGER[], p_state JSON[], p_now TEXT[], p_study_state TEXT[], p_study_reason TEXT[],
  u_from INTEGER[], u_count INTEGER[],
  u_ids INTEGER[], u_expected TEXT[], u_state TEXT[], u_client TEXT[], u_lease TEXT[],
  u_value DOUBLE PRECISION[], u_stderr DOUBLE PRECISION[], u_reason TEXT[], u_late BOOLEAN[], u_completed TEXT[],
  n_from INTEGER[], n_count INTEGER[],
  n_state TEXT[], n_generation INTEGER[], n_client TEXT[], n_lease TEXT[], n_parameters JSON[], n_point JSON[],
  n_value DOUBLE PRECISION[], n_stderr DOUBLE PRECISION[], n_source TEXT[], n_completed TEXT[]
) RETURNS TABLE (i INTEGER, outcome TEXT, revision INTEGER, first_trial_id INTEGER, lock_ms DOUBLE PRECISION)
LANGUAGE plpgsql AS $$
DECLARE
  k INTEGER;
  a INTEGER;
  b INTEGER;
  c INTEGER;
  d INTEGER;
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
    IF u_count[k] = 0 THEN
      -- No guarded update, so no PNTC1: no subtransaction needed.
      SELECT f.outcome, f.revision, f.first_trial_id, f.lock_ms INTO o_outcome, o_revision, o_first, o_lock FROM probnes_commit(p_study[k], p_expected_revision[k], p_expected_seq[k], p_generation[k],
        p_state_version[k], p_state[k], p_now[k],
        '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}',
        n_state[c:d], n_generation[c:d], n_client[c:d], n_lease[c:d], n_parameters[c:d], n_point[c:d],
        n_value[c:d], n_stderr[c:d], n_source[c:d], n_completed[c:d], p_study_state[k], p_study_reason[k]) AS f;
    ELSE
      BEGIN
        SELECT f.outcome, f.revision, f.first_trial_id, f.lock_ms INTO o_outcome, o_revision, o_first, o_lock FROM probnes_commit(p_study[k], p_expected_revision[k], p_expected_seq[k], p_generation[k],
          p_state_version[k], p_state[k], p_now[k],
          u_ids[a:b], u_expected[a:b], u_state[a:b], u_client[a:b], u_lease[a:b], u_value[a:b], u_stderr[a:b],
          u_reason[a:b], u_late[a:b], u_completed[a:b],
          n_state[c:d], n_generation[c:d], n_client[c:d], n_lease[c:d], n_parameters[c:d], n_point[c:d],
          n_value[c:d], n_stderr[c:d], n_source[c:d], n_completed[c:d], p_study_state[k], p_study_reason[k]) AS f;
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
