-- 008: the evaluation rows of 006 (position, best so far, best-so-far steps) are computed by the
-- service (src/domain/results) and written by the commit that completes a trial, in its
-- transaction, and by an import with its trials; the triggers that computed them here go. Which
-- value is better is the service's to decide, in one place; the table and its rows stay as they
-- are, so a study migrated forward reads exactly as before.
DROP TRIGGER trials_evaluation_insert;
DROP TRIGGER trials_evaluation_update;
