import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MigrationError, PostgresStorage, loadPostgresMigrations, type Storage } from '../../src/storage/index.js';
import { createTestDatabase, postgresServer, type TestDatabase } from '../helpers/postgres.js';
import { storageContract, study } from './contract.js';

const server = postgresServer();

describe.skipIf(!server)('PostgresStorage', () => {
  let db: TestDatabase;
  const open: Storage[] = [];
  const connect = async (opts: Partial<Parameters<typeof PostgresStorage.open>[0]> = {}) => {
    const s = await PostgresStorage.open({ url: db.url, poolSize: 4, ...opts });
    open.push(s);
    return s;
  };
  beforeAll(async () => {
    db = await createTestDatabase(server!);
  });
  afterAll(async () => {
    for (const s of open) await s.close();
    await db?.drop();
  });

  // Each contract test gets empty tables: delete what the previous one wrote (cascading to trials and states).
  storageContract('PostgreSQL', async () => {
    const s = await PostgresStorage.open({ url: db.url, poolSize: 4 });
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    await c.query("DELETE FROM studies; DELETE FROM api_keys; DELETE FROM tenants WHERE id <> 'default'");
    await c.end();
    return s;
  });

  it('replicas starting together apply the migrations once, under the advisory lock', async () => {
    const fresh = await createTestDatabase(server!, 'probnes_mig');
    try {
      const all = await Promise.all(Array.from({ length: 4 }, () => PostgresStorage.open({ url: fresh.url, poolSize: 1 })));
      const c = new pg.Client({ connectionString: fresh.url });
      await c.connect();
      const rows = (await c.query('SELECT version FROM schema_migrations ORDER BY version')).rows.map((r: { version: number }) => r.version);
      await c.end();
      expect(rows).toEqual(loadPostgresMigrations().map((m) => m.version));
      for (const s of all) expect((await s.health()).ok).toBe(true);
      await Promise.all(all.map((s) => s.close()));
    } finally {
      await fresh.drop();
    }
  });

  it('refuses a schema newer than it knows, with a message saying what to do', async () => {
    const s = await connect();
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    await c.query("INSERT INTO schema_migrations (version, name) VALUES (999, 'from_the_future')");
    try {
      await expect(PostgresStorage.open({ url: db.url })).rejects.toThrow(MigrationError);
      await expect(PostgresStorage.open({ url: db.url })).rejects.toThrow(/version 999, newer than this server knows \(\d+\).*newer release/);
      const h = await s.health();
      expect(h).toMatchObject({ ok: false, schemaVersion: 999 });
    } finally {
      await c.query('DELETE FROM schema_migrations WHERE version = 999');
      await c.end();
    }
  });

  it('two replicas racing on one study: one commit wins, the other is refused and writes nothing', async () => {
    const a = await connect();
    const b = await connect();
    await a.createStudy(study('race'), { version: 1, state: { g: 0 } });
    const la = (await a.loadLoopState('default', 'race', { trialIds: [], knownRevision: null }))!;
    const lb = (await b.loadLoopState('default', 'race', { trialIds: [], knownRevision: null }))!;
    const commit = (seq: number, x: number) => ({
      expectedRevision: 1,
      expectedCommitSeq: seq,
      generation: 0,
      engineState: null,
      newTrials: [{ state: 'REQUESTED' as const, generation: 0, parameters: { x }, point: [x], source: 'suggested' as const }],
      now: '2025-01-01T00:00:01.000Z',
    });
    const [ra, rb] = await Promise.all([a.commitGeneration('race', commit(la.commitSeq, 0.1)), b.commitGeneration('race', commit(lb.commitSeq, 0.2))]);
    expect([ra.committed, rb.committed].sort()).toEqual([false, true]);
    const loser = ra.committed ? rb : ra;
    expect(loser).toEqual({ committed: false, reason: 'revision_conflict' });
    expect((await a.listAllTrials('race')).map((t) => [t.trialId, t.parameters.x])).toEqual([[1, ra.committed ? 0.1 : 0.2]]);
    const after = (await b.loadLoopState('default', 'race', { trialIds: [], knownRevision: 1 }))!;
    expect(after).toMatchObject({ nextTrialId: 2, commitSeq: la.commitSeq + 1, engineState: null, revision: 1 });
  });

  it('a guarded trial update that finds another state rolls the whole commit back', async () => {
    const s = await connect();
    await s.createStudy(study('guard'), { version: 1, state: {} });
    const r = await s.commitGeneration('guard', { expectedRevision: 1, generation: 0, engineState: null, newTrials: [{ state: 'REQUESTED', generation: 0, parameters: { x: 0.5 }, point: [0], source: 'suggested' }], now: '2025-01-01T00:00:01.000Z' });
    expect(r.committed).toBe(true);
    const update = { trialId: 1, expectedState: 'ACTIVE' as const, state: 'COMPLETED' as const, clientId: null, leaseExpiresAt: null, value: 1, stderr: null, failureReason: null, late: false, completedAt: '2025-01-01T00:00:02.000Z' };
    const res = await s.commitGeneration('guard', { expectedRevision: 1, generation: 0, engineState: { version: 1, state: { g: 1 } }, newTrials: [], trialUpdates: [update], now: '2025-01-01T00:00:02.000Z' });
    expect(res).toEqual({ committed: false, reason: 'trial_conflict' });
    expect(await s.getEngineState('guard')).toMatchObject({ revision: 1 });
    expect(await s.getTrial('guard', 1)).toMatchObject({ state: 'REQUESTED' });
  });

  it('reports the pool and answers unhealthy, not an exception, when the server is unreachable', async () => {
    const s = await connect();
    expect(s.poolStats()).toMatchObject({ max: 4 });
    expect(s.kind).toBe('postgres');
    await expect(PostgresStorage.open({ url: 'postgres://postgres@127.0.0.1:1/none', connectTimeoutMs: 500 })).rejects.toMatchObject({ name: 'StorageUnavailableError' });
  });
});
