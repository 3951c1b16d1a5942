-- 010: what a study's results are: its objectives (names and directions), its constraints and its
-- hypervolume's reference point, as the service writes them (docs/multi-objective.md). NULL for a
-- study of one objective without constraints: its `direction` says everything, as before. A trial's
-- objective vector, constraint values and infeasibility are fields of its `outcome` (009), so the
-- trials table does not change.
ALTER TABLE studies ADD COLUMN outcomes TEXT CHECK (outcomes IS NULL OR json_valid(outcomes));
