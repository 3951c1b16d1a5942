-- 001: tenants and API keys, studies, trials, engine-state snapshots, server settings.
-- Timestamps are ISO-8601 UTC text written by the service (one clock, injectable in tests).
-- JSON columns hold plain JSON text; the service validates it before it gets here.

CREATE TABLE tenants (
  id         TEXT PRIMARY KEY,
  name       TEXT NOT NULL,
  created_at TEXT NOT NULL
);

-- Only a hash of each key is stored; the key itself is shown once, when it is created.
CREATE TABLE api_keys (
  id         TEXT PRIMARY KEY,
  tenant_id  TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  key_hash   TEXT NOT NULL UNIQUE,
  label      TEXT,
  created_at TEXT NOT NULL,
  revoked_at TEXT
);
CREATE INDEX api_keys_tenant ON api_keys(tenant_id);

-- The tenant that owns everything while the server runs without API keys.
INSERT INTO tenants (id, name, created_at) VALUES ('default', 'default', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));

-- `seq` orders studies for cursor pagination; `id` is the public, unguessable identifier.
CREATE TABLE studies (
  seq           INTEGER PRIMARY KEY AUTOINCREMENT,
  id            TEXT NOT NULL UNIQUE,
  tenant_id     TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  name          TEXT NOT NULL,
  direction     TEXT NOT NULL CHECK (direction IN ('minimize', 'maximize')),
  parameters    TEXT NOT NULL CHECK (json_valid(parameters)),
  prior         TEXT NOT NULL CHECK (json_valid(prior)),
  method        TEXT NOT NULL,
  batch_size    INTEGER NOT NULL CHECK (batch_size >= 1),
  options       TEXT NOT NULL CHECK (json_valid(options)),
  seed          INTEGER NOT NULL,
  max_trials    INTEGER,
  lease_seconds INTEGER NOT NULL CHECK (lease_seconds >= 1),
  known_optimum REAL,
  metadata      TEXT NOT NULL CHECK (json_valid(metadata)),
  state         TEXT NOT NULL CHECK (state IN ('ACTIVE', 'PAUSED', 'COMPLETED')),
  reason        TEXT,
  generation    INTEGER NOT NULL DEFAULT 0,
  -- Trial ids are numbered per study (1, 2, 3, ...); this is the next one to hand out.
  next_trial_id INTEGER NOT NULL DEFAULT 1,
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
  lease_expires_at TEXT,
  parameters       TEXT NOT NULL CHECK (json_valid(parameters)), -- user units, keyed by parameter name
  point            TEXT CHECK (point IS NULL OR json_valid(point)), -- internal whitened coordinates
  value            REAL,
  stderr           REAL,
  failure_reason   TEXT,
  source           TEXT NOT NULL CHECK (source IN ('suggested', 'external')),
  created_at       TEXT NOT NULL,
  completed_at     TEXT,
  updated_at       TEXT NOT NULL,
  PRIMARY KEY (study_id, trial_id)
);
CREATE INDEX trials_study_state ON trials(study_id, state);
CREATE INDEX trials_study_client ON trials(study_id, client_id, state);

-- One snapshot per study and generation; `revision` increases with every commit so that two
-- writers racing on the same study cannot both commit (optimistic concurrency).
CREATE TABLE engine_states (
  study_id   TEXT NOT NULL REFERENCES studies(id) ON DELETE CASCADE,
  generation INTEGER NOT NULL,
  revision   INTEGER NOT NULL,
  version    INTEGER NOT NULL, -- format version of `state`
  state      TEXT NOT NULL CHECK (json_valid(state)),
  created_at TEXT NOT NULL,
  PRIMARY KEY (study_id, generation)
);
CREATE UNIQUE INDEX engine_states_revision ON engine_states(study_id, revision);

-- Server-wide settings kept with the data, so every replica sharing the database agrees on them.
CREATE TABLE settings (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
-- Signs pagination tokens; stored here so tokens survive restarts.
INSERT INTO settings (key, value) VALUES ('page_token_secret', lower(hex(randomblob(32))));
