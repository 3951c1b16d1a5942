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
    await c.query("DELETE FROM studies; DELETE FROM api_keys; DELETE FROM tenants WHERE id <> 'default'; DELETE FROM settings WHERE key = 'auth_mode'");
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

  it('commits submitted together go out as one statement, each with its own checks and outcome', async () => {
    const s = await connect();
    const ids = ['b1', 'b2', 'b3', 'b4', 'b5'];
    for (const id of ids) await s.createStudy(study(id), { version: 1, state: { g: 0 } });
    // One suggested trial in each, REQUESTED (lone commits: nothing else is in flight).
    const ask = { expectedRevision: 1, generation: 0, engineState: null, now: '2025-01-01T00:00:01.000Z' };
    for (const id of ids) expect((await s.commitGeneration(id, { ...ask, newTrials: [{ state: 'REQUESTED', generation: 0, parameters: { x: 0.5 }, point: [0], source: 'suggested' }] })).committed).toBe(true);
    const seq = async (id: string) => (await s.loadLoopState('default', id, { trialIds: [], knownRevision: 1 }))!.commitSeq;
    const seqs = Object.fromEntries(await Promise.all(ids.map(async (id) => [id, await seq(id)] as const)));
    const complete = (expectedState: 'REQUESTED' | 'ACTIVE') => ({ trialId: 1, expectedState, state: 'COMPLETED' as const, clientId: null, leaseExpiresAt: null, value: 2, stderr: null, failureReason: null, late: false, completedAt: '2025-01-01T00:00:02.000Z' });
    const tell = { generation: 1, engineState: { version: 1, state: { g: 1 } }, now: '2025-01-01T00:00:02.000Z' };
    const statements0 = s.poolStats()!.statements;
    const results = await Promise.all([
      // b1: a result and two new trials.
      s.commitGeneration('b1', { ...tell, expectedRevision: 1, expectedCommitSeq: seqs.b1, trialUpdates: [complete('REQUESTED')], newTrials: [0.1, 0.2].map((x) => ({ state: 'REQUESTED' as const, generation: 1, parameters: { x }, point: [x], source: 'suggested' as const })) }),
      // b2: the same.
      s.commitGeneration('b2', { ...tell, expectedRevision: 1, expectedCommitSeq: seqs.b2, trialUpdates: [complete('REQUESTED')], newTrials: [{ state: 'REQUESTED', generation: 1, parameters: { x: 0.3 }, point: [0.3], source: 'suggested' }] }),
      // b3: a stale commit count: refused, nothing written.
      s.commitGeneration('b3', { ...tell, expectedRevision: 1, expectedCommitSeq: seqs.b3 - 1, trialUpdates: [complete('REQUESTED')], newTrials: [] }),
      // b4: a guarded update that finds another state: rolled back alone.
      s.commitGeneration('b4', { ...tell, expectedRevision: 1, expectedCommitSeq: seqs.b4, trialUpdates: [complete('ACTIVE')], newTrials: [{ state: 'REQUESTED', generation: 1, parameters: { x: 0.4 }, point: [0.4], source: 'suggested' }] }),
      // A study that does not exist.
      s.commitGeneration('nope', { ...tell, expectedRevision: 1, newTrials: [] }),
      // b5 itself: only new trials.
      s.commitGeneration('b5', { ...ask, expectedCommitSeq: seqs.b5, newTrials: [{ state: 'REQUESTED', generation: 0, parameters: { x: 0.6 }, point: [0.6], source: 'suggested' }] }),
    ]);
    expect(results).toEqual([
      { committed: true, revision: 2, trialIds: [2, 3] },
      { committed: true, revision: 2, trialIds: [2] },
      { committed: false, reason: 'revision_conflict' },
      { committed: false, reason: 'trial_conflict' },
      { committed: false, reason: 'study_not_found' },
      { committed: true, revision: 1, trialIds: [2] },
    ]);
    // One statement: the six commits were submitted together (each with its own outcome above).
    expect(s.poolStats()!.statements - statements0).toBe(1);
    const trials = async (id: string) => (await s.listAllTrials(id)).map((t) => [t.trialId, t.state]);
    expect(await trials('b1')).toEqual([[1, 'COMPLETED'], [2, 'REQUESTED'], [3, 'REQUESTED']]);
    expect(await trials('b2')).toEqual([[1, 'COMPLETED'], [2, 'REQUESTED']]);
    expect(await trials('b3')).toEqual([[1, 'REQUESTED']]);
    expect(await trials('b4')).toEqual([[1, 'REQUESTED']]);
    expect(await trials('b5')).toEqual([[1, 'REQUESTED'], [2, 'REQUESTED']]);
    for (const [id, revision] of [['b1', 2], ['b2', 2], ['b3', 1], ['b4', 1], ['b5', 1]] as const) expect(await s.getEngineState(id)).toMatchObject({ revision });
    expect(await seq('b2')).toBe(seqs.b2 + 1);
    expect(await seq('b3')).toBe(seqs.b3);
    expect(await seq('b4')).toBe(seqs.b4);
  });

  it('a commit that waited for the row lock is checked against what the holder committed, not against its statement\'s older snapshot', async () => {
    const s = await connect();
    await s.createStudy(study('wait'), { version: 1, state: {} });
    const ask = { expectedRevision: 1, generation: 0, engineState: null, now: '2025-01-01T00:00:01.000Z' };
    expect((await s.commitGeneration('wait', { ...ask, newTrials: [0.1, 0.2].map((x) => ({ state: 'REQUESTED' as const, generation: 0, parameters: { x }, point: [x], source: 'suggested' as const })) })).committed).toBe(true);
    const lease = (trialId: number, expectedState: 'REQUESTED' | 'ACTIVE') => ({ trialId, expectedState, state: 'ACTIVE' as const, clientId: 'w', leaseExpiresAt: '2025-01-01T00:10:00.000Z', value: null, stderr: null, failureReason: null, late: false, completedAt: null });
    // Another writer holds the study's row lock and leases trial 1 (as a commit does: the trial and the commit count).
    const other = new pg.Client({ connectionString: db.url });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query("SELECT 1 FROM studies WHERE id = 'wait' FOR UPDATE");
      await other.query("UPDATE trials SET state = 'ACTIVE' WHERE study_id = 'wait' AND trial_id = 1");
      await other.query("UPDATE studies SET commit_seq = commit_seq + 1 WHERE id = 'wait'");
      // Without a commit count, so only the trial guards decide: these wait for the lock.
      const stale = s.commitGeneration('wait', { ...ask, newTrials: [], trialUpdates: [lease(1, 'REQUESTED')] });
      await new Promise((r) => setTimeout(r, 300));
      await other.query('COMMIT');
      expect(await stale).toEqual({ committed: false, reason: 'trial_conflict' });
      // The same, expecting what the other writer left: it applies.
      await other.query('BEGIN');
      await other.query("SELECT 1 FROM studies WHERE id = 'wait' FOR UPDATE");
      await other.query("UPDATE trials SET state = 'ACTIVE' WHERE study_id = 'wait' AND trial_id = 2");
      await other.query("UPDATE studies SET commit_seq = commit_seq + 1 WHERE id = 'wait'");
      const fresh = s.commitGeneration('wait', { ...ask, newTrials: [], trialUpdates: [{ ...lease(2, 'ACTIVE'), clientId: 'v' }] });
      await new Promise((r) => setTimeout(r, 300));
      await other.query('COMMIT');
      expect(await fresh).toEqual({ committed: true, revision: 1, trialIds: [] });
    } finally {
      await other.end();
    }
    expect((await s.listAllTrials('wait')).map((t) => [t.trialId, t.state, t.clientId])).toEqual([[1, 'ACTIVE', null], [2, 'ACTIVE', 'v']]);
  });

  it('reports the pool and answers unhealthy, not an exception, when the server is unreachable', async () => {
    const s = await connect();
    expect(s.poolStats()).toMatchObject({ max: 4 });
    expect(s.kind).toBe('postgres');
    await expect(PostgresStorage.open({ url: 'postgres://postgres@127.0.0.1:1/none', connectTimeoutMs: 500 })).rejects.toMatchObject({ name: 'StorageUnavailableError' });
  });
});
