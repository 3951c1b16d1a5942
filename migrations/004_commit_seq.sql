-- 004: a per-study count of commits. Every commit of the optimisation loop increases it; a commit
-- computed from a load that saw another value is refused (another writer, another replica sharing
-- a PostgreSQL database, changed the study in between: leases, results, new trials, not only the
-- engine state the revision covers). One process never trips it (its per-study lock orders the
-- requests); PostgreSQL's schema has the same column, so both backends keep one contract.
ALTER TABLE studies ADD COLUMN commit_seq INTEGER NOT NULL DEFAULT 0;
