-- 010: SQLite's 010 in PostgreSQL (see migrations/010_study_outcomes.sql): a study's objectives,
-- constraints and reference point, NULL for a study of one objective without constraints.
ALTER TABLE studies ADD COLUMN outcomes JSON;
