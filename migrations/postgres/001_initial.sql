-- 001: the schema of SQLite's migrations 001-004 (migrations/*.sql) in PostgreSQL: tenants and API
-- keys, studies, trials, engine-state snapshots, server settings, trial counts kept by triggers, the
-- per-study commit count. Later changes to one backend's schema get a migration in both folders.
-- Timestamps are ISO-8601 UTC text written by the service (one format on both backends, so an
-- export reads the same from either), ordered and compared byte by byte (COLLATE "C", as SQLite
-- does) wherever the service sorts or compares them; JSON columns are `json` (the text as written, key order
-- included, validated by the server), not `jsonb`, for the same reason.

CREATE TABLE tenants (
  id         TEXT PRIMARY KEY,
  name       TEXT NOT NULL,
  created_at TEXT NOT NULL
);

-- Only a hash of each key is stored; the key itself is shown once, when it is created.
CREATE TABLE api_keys (
  id         TEXT COLLATE "C" PRIMARY KEY,
  tenant_id  TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  key_hash   TEXT NOT NULL UNIQUE,
  label      TEXT,
  created_at TEXT COLLATE "C" NOT NULL,
  revoked_at TEXT
);
CREATE INDEX api_keys_tenant ON api_keys(tenant_id);

-- The tenant that owns everything while the server runs without API keys.
INSERT INTO tenants (id, name, created_at)
  VALUES ('default', 'default', to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'));

-- `seq` orders studies for cursor pagination; `id` is the public, unguessable identifier.
CREATE TABLE studies (
  seq           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id            TEXT NOT NULL UNIQUE,
  tenant_id     TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  name          TEXT NOT NULL,
  direction     TEXT NOT NULL CHECK (direction IN ('minimize', 'maximize')),
  parameters    JSON NOT NULL,
  prior         JSON NOT NULL,
  method        TEXT NOT NULL,
  batch_size    INTEGER NOT NULL CHECK (batch_size >= 1),
  options       JSON NOT NULL,
  seed          BIGINT NOT NULL,
  max_trials    INTEGER,
  lease_seconds INTEGER NOT NULL CHECK (lease_seconds >= 1),
  known_optimum DOUBLE PRECISION,
  metadata      JSON NOT NULL,
  state         TEXT NOT NULL CHECK (state IN ('ACTIVE', 'PAUSED', 'COMPLETED')),
  reason        TEXT,
  generation    INTEGER NOT NULL DEFAULT 0,
  -- Trial ids are numbered per study (1, 2, 3, ...); this is the next one to hand out.
  next_trial_id INTEGER NOT NULL DEFAULT 1,
  -- Every commit of the loop increases it; a commit loaded from another value is refused.
  commit_seq    BIGINT NOT NULL DEFAULT 0,
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
);
CREATE INDEX studies_tenant_seq ON studies(tenant_id, seq);

CREATE TABLE trials (
  study_id         TEXT NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
  trial_id         INTEGER NOT NULL,
  state            TEXT NOT NULL CHECK (state IN ('REQUESTED', 'ACTIVE', 'COMPLETED', 'FAILED', 'ABANDONED')),
  generation       INTEGER NOT NULL,
  client_id        TEXT,
  lease_expires_at TEXT COLLATE "C",
  parameters       JSON NOT NULL, -- user units, keyed by parameter name
  point            JSON, -- internal whitened coordinates
  value            DOUBLE PRECISION,
  stderr           DOUBLE PRECISION,
  failure_reason   TEXT,
  source           TEXT NOT NULL CHECK (source IN ('suggested', 'external')),
  created_at       TEXT NOT NULL,
  completed_at     TEXT COLLATE "C",
  updated_at       TEXT NOT NULL,
  PRIMARY KEY (study_id, trial_id)
);
CREATE INDEX trials_study_state ON trials(study_id, state);
CREATE INDEX trials_study_client ON trials(study_id, client_id, state);
CREATE INDEX trials_study_generation ON trials(study_id, generation, source);

-- One snapshot per study and generation; `revision` increases with every new engine state so that
-- two writers racing on the same study cannot both commit (optimistic concurrency).
CREATE TABLE engine_states (
  study_id   TEXT NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
  generation INTEGER NOT NULL,
  revision   INTEGER NOT NULL,
  version    INTEGER NOT NULL, -- format version of `state`
  state      JSON NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (study_id, generation)
);
CREATE UNIQUE INDEX engine_states_revision ON engine_states(study_id, revision);

-- Server-wide settings kept with the data, so every replica sharing the database agrees on them.
CREATE TABLE settings (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
-- Signs pagination tokens. gen_random_uuid() draws from the server's strong random source (no
-- extension needed); two of them, dashes removed, give 64 hex digits (244 random bits).
INSERT INTO settings (key, value) VALUES ('page_token_secret', replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''));

-- Trial counts by state, per study, kept by triggers (see SQLite's 003): every loop request reads
-- a study with its counts, and a GROUP BY over 10 000 trials per request is too slow. The triggers
-- run in the writing transaction, which already holds the study's row lock (commitGeneration),
-- so concurrent commits on one study never race on these rows.
CREATE TABLE study_trial_counts (
  study_id TEXT NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
  state    TEXT NOT NULL,
  n        INTEGER NOT NULL,
  PRIMARY KEY (study_id, state)
);

CREATE FUNCTION trials_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    UPDATE study_trial_counts SET n = n - 1 WHERE study_id = OLD.study_id AND state = OLD.state;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO study_trial_counts (study_id, state, n) VALUES (NEW.study_id, NEW.state, 1)
      ON CONFLICT (study_id, state) DO UPDATE SET n = study_trial_counts.n + 1;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER trials_count_insert AFTER INSERT ON trials FOR EACH ROW EXECUTE FUNCTION trials_count();
CREATE TRIGGER trials_count_update AFTER UPDATE OF state ON trials FOR EACH ROW
  WHEN (OLD.state IS DISTINCT FROM NEW.state) EXECUTE FUNCTION trials_count();
-- After a study's deletion has cascaded to its counts this updates nothing, which is fine.
CREATE TRIGGER trials_count_delete AFTER DELETE ON trials FOR EACH ROW EXECUTE FUNCTION trials_count();
