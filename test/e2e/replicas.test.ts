/**
 * Stateless replicas on one PostgreSQL database, as real server processes (each with its own pool,
 * caches, in-process locks and engine worker), with clients that send each request to the next
 * replica in turn and retry on the others when one fails (a refused connection, a retryable 503):
 *
 * - 12 workers on 3 studies (prob-cmaes, cmaes, bo) until max_trials: every trial completed exactly
 *   once with the acknowledged value, trial ids dense, each generation one joint batch of its
 *   generation_size points (created in one commit) plus extras asked later, the update made from
 *   generation_size results (batch_size; prob-cmaes's start phase, docs/ALGORITHM.md §29: the
 *   stencil of 2d + 1, then one result per generation);
 * - one sequential client alternating between the replicas follows, point for point, the trajectory
 *   of the same seed on one SQLite process;
 * - SIGKILL of a replica under load: every acknowledged observation is there, and the points leased
 *   through it (by a client that died with it) are handed out again once the lease expires;
 * - pg_terminate_backend of every replica connection, repeatedly, under load: the requests in
 *   flight fail with a retryable 503 problem+json, the replicas reconnect by themselves, nothing
 *   acknowledged is lost;
 * - export from SQLite, import into PostgreSQL, export again: the same document (and back).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { branin, braninStudy, fastOptions } from '../helpers/loop.js';
import { createTestDatabase, postgresServer, type TestDatabase } from '../helpers/postgres.js';
import { startServer, type ServerProcess } from '../helpers/server-process.js';
import { generationSize, type BaseState, type MethodName } from '../../src/engine/index.js';
import { startPhaseLength } from '../../src/engine/strategies/probnes-params.js';

const server = postgresServer();
const json = { 'content-type': 'application/json' };
const RETRYABLE = new Set(['database_unavailable', 'concurrent_update', 'not_ready']);

type Trial = { trial_id: number; state: string; generation: number; source: string; parameters: Record<string, number>; value: number | null; client_id: string | null; created_at: string };

/** What clients saw: acknowledged observations, and every failed answer by status and code. */
class Ledger {
  readonly observed = new Map<string, number>();
  readonly failures = new Map<string, number>();
  networkErrors = 0;
  fail(what: string) {
    this.failures.set(what, (this.failures.get(what) ?? 0) + 1);
  }
}

/**
 * A client: each request to the next replica in turn; a refused connection or a retryable 503
 * problem+json is sent again, as it is, to the next one. Anything else is returned.
 */
function client(bases: () => string[], ledger: Ledger, start = 0) {
  let next = start;
  return async (method: 'GET' | 'POST', url: string, body?: unknown): Promise<{ status: number; json: any }> => {
    for (let attempt = 0; attempt < 200; attempt++) {
      const list = bases();
      const base = list[next++ % list.length]!;
      let res: Response;
      try {
        res = await fetch(base + url, { method, ...(body === undefined ? {} : { headers: json, body: JSON.stringify(body) }), signal: AbortSignal.timeout(30_000) });
      } catch {
        ledger.networkErrors++;
        await new Promise((r) => setTimeout(r, 20));
        continue;
      }
      const out: { status: number; json: any } = { status: res.status, json: await res.json() };
      if (res.status === 503 && res.headers.get('content-type')?.startsWith('application/problem+json') && RETRYABLE.has(out.json.code)) {
        ledger.fail(`503 ${out.json.code}`);
        await new Promise((r) => setTimeout(r, 20));
        continue;
      }
      if (res.status >= 400) ledger.fail(`${res.status} ${out.json.code}`);
      return out;
    }
    throw new Error(`${method} ${url}: no replica answered`);
  };
}
type Client = ReturnType<typeof client>;

/** A worker: ask one point, evaluate it, report it, until the study has no more to give (or `stop()`). */
async function work(call: Client, studyId: string, clientId: string, ledger: Ledger, stop: () => boolean = () => false): Promise<void> {
  while (!stop()) {
    const s = await call('GET', `/v1/studies/${studyId}/suggestions?count=1&client_id=${clientId}`);
    expect(s.status, JSON.stringify(s.json)).toBe(200);
    const t = s.json.trials[0];
    if (!t) {
      expect(['max_trials_reached', 'study_completed']).toContain(s.json.reason);
      return;
    }
    const value = branin(t.parameters);
    const o = await call('POST', `/v1/studies/${studyId}/observations`, { observations: [{ trial_id: t.trial_id, value }] });
    expect(o.status, JSON.stringify(o.json)).toBe(200);
    ledger.observed.set(`${studyId}/${t.trial_id}`, value);
  }
}

async function allTrials(call: Client, studyId: string): Promise<Trial[]> {
  const r = await call('GET', `/v1/studies/${studyId}/trials?page_size=1000`);
  expect(r.status).toBe(200);
  expect(r.json.next_page_token ?? null).toBeNull();
  return r.json.trials;
}

/** Every acknowledged observation is stored once, COMPLETED, with its value. */
function expectAcknowledged(ledger: Ledger, studyId: string, trials: Trial[]) {
  const byId = new Map(trials.map((t) => [t.trial_id, t]));
  for (const [key, value] of ledger.observed) {
    const [sid, id] = key.split('/');
    if (sid !== studyId) continue;
    expect(byId.get(Number(id)), key).toMatchObject({ state: 'COMPLETED', value });
  }
}

describe.skipIf(!server)('replicas on one PostgreSQL database', () => {
  let db: TestDatabase;
  let replicas: ServerProcess[] = [];
  let sqlite: ServerProcess;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-replicas-'));
  const env = () => ({ DATABASE_URL: db.url, DATABASE_POOL_SIZE: '4', ENGINE_WORKERS: '1', RATE_LIMIT_PER_MINUTE: '0' });
  // Generous: on a loaded machine a tsx start alone can take half a minute.
  const startReplica = () => startServer(path.join(tmp, 'unused.db'), { env: env(), readyTimeoutMs: 120_000 });
  const bases = () => replicas.map((r) => r.base);

  beforeAll(async () => {
    db = await createTestDatabase(server!, 'probnes_replicas');
    // One first (it migrates), then two at once (they find the schema in place).
    replicas = [await startReplica()];
    replicas.push(...(await Promise.all([startReplica(), startReplica()])));
    sqlite = await startServer(path.join(tmp, 'single.db'), { env: { ENGINE_WORKERS: '1', RATE_LIMIT_PER_MINUTE: '0' }, readyTimeoutMs: 120_000 });
  }, 400_000);
  afterAll(async () => {
    await Promise.all([...replicas, sqlite].filter(Boolean).map((r) => r.stop('SIGKILL')));
    await db?.drop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('12 workers on 3 studies until max_trials: every trial completed once, ids dense, one joint batch per generation', async () => {
    const ledger = new Ledger();
    const admin = client(bases, ledger);
    const specs: [MethodName, number, number][] = [
      ['prob-cmaes', 4, 24],
      ['cmaes', 4, 24],
      ['bo', 2, 10],
    ];
    const studies: { id: string; batch: number; max: number }[] = [];
    for (const [method, batch, max] of specs) {
      const r = await admin('POST', '/v1/studies', braninStudy(method, { batch_size: batch, max_trials: max, options: fastOptions(method) }));
      expect(r.status).toBe(201);
      studies.push({ id: r.json.id as string, batch, max });
    }
    await Promise.all(Array.from({ length: 12 }, (_, w) => work(client(bases, ledger, w), studies[w % 3]!.id, `w${w}`, ledger)));
    expect([...ledger.failures.keys()].filter((k) => !k.startsWith('503'))).toEqual([]);
    for (const { id, batch, max } of studies) {
      const study = (await admin('GET', `/v1/studies/${id}`)).json;
      // Each generation's size, from its engine state: batch_size, or the start phase's (prob-cmaes).
      const exported = await admin('GET', `/v1/studies/${id}/export`);
      expect(exported.status).toBe(200);
      const sizes: number[] = [];
      for (const e of exported.json.engine_states as { generation: number; state: BaseState }[]) sizes[e.generation] = generationSize(e.state);
      expect(sizes).toHaveLength(study.generation + 1);
      if (id === studies[0]!.id) {
        // max_trials 24 = 12·d declares a phase of 5·d = 10 evaluations at d = 2: the stencil, one result per
        // generation, then the hand-over to generations of batch_size within the budget.
        expect(startPhaseLength(2, max)).toBe(10);
        expect([sizes[0], sizes[1]]).toEqual([5, 1]);
        expect(sizes).toContain(batch);
      } else {
        expect(new Set(sizes)).toEqual(new Set([batch]));
      }
      expect(study).toMatchObject({ state: 'COMPLETED', trial_counts: { COMPLETED: max, ACTIVE: 0, REQUESTED: 0 } });
      const trials = await allTrials(admin, id);
      expect(trials.map((t) => t.trial_id)).toEqual(trials.map((_, i) => i + 1));
      expectAcknowledged(ledger, id, trials);
      expect([...ledger.observed.keys()].filter((k) => k.startsWith(`${id}/`))).toHaveLength(max);
      for (let g = 0; g < study.generation; g++) {
        const size = sizes[g]!;
        const gen = trials.filter((t) => t.generation === g && t.source === 'suggested');
        const joint = gen.slice(0, size);
        expect(joint, `generation ${g}: its batch of ${size}`).toHaveLength(size);
        expect(new Set(joint.map((t) => t.created_at)).size, `generation ${g}: one joint batch`).toBe(1);
        for (const extra of gen.slice(size)) expect(extra.created_at > joint[0]!.created_at, `generation ${g}: extras after the batch`).toBe(true);
        expect(gen.filter((t) => t.state === 'COMPLETED').length, `generation ${g}`).toBeGreaterThanOrEqual(size);
      }
    }
  }, 180_000);

  it('one client alternating between the replicas follows the trajectory of one SQLite process', async () => {
    const run = async (targets: string[]) => {
      const ledger = new Ledger();
      const calls = targets.map((b) => client(() => [b], ledger));
      const created = await calls[0]!('POST', '/v1/studies', braninStudy('prob-cmaes', { batch_size: 3, seed: 21, options: fastOptions('prob-cmaes') }));
      const id = created.json.id as string;
      const points: Record<string, number>[] = [];
      for (let i = 0; i < 12; i++) {
        const s = await calls[i % calls.length]!('GET', `/v1/studies/${id}/suggestions?count=1&client_id=solo`);
        const t = s.json.trials[0];
        points.push(t.parameters);
        const o = await calls[(i + 1) % calls.length]!('POST', `/v1/studies/${id}/observations`, { observations: [{ trial_id: t.trial_id, value: branin(t.parameters) }] });
        expect(o.status).toBe(200);
      }
      return { points, generation: (await calls[0]!('GET', `/v1/studies/${id}`)).json.generation };
    };
    const reference = await run([sqlite.base]);
    // All 12 in Powell's start phase (ALGORITHM.md §29): the stencil of 2d + 1 = 5 is generation 0,
    // then each result a generation of its own.
    expect(startPhaseLength(2, null)).toBeGreaterThan(12);
    expect(reference.generation).toBe(1 + (12 - 5));
    expect(await run(bases())).toEqual(reference);
  }, 120_000);

  it('SIGKILL of a replica under load: acknowledged observations kept, its leases expire and their points are handed out again', async () => {
    const ledger = new Ledger();
    const admin = client(bases, ledger);
    const loadStudy = (await admin('POST', '/v1/studies', braninStudy('cmaes', { batch_size: 4, max_trials: 40 }))).json.id as string;
    const ghostStudy = (await admin('POST', '/v1/studies', braninStudy('cmaes', { batch_size: 4, lease_seconds: 2 }))).json.id as string;
    const victim = replicas[2]!;
    // A client that dies with the replica: two points leased through it, never reported.
    const ghost: { trials: Trial[] } = await fetch(`${victim.base}/v1/studies/${ghostStudy}/suggestions?count=2&client_id=ghost`).then((r) => r.json() as Promise<{ trials: Trial[] }>);
    const ghostIds = ghost.trials.map((t: Trial) => t.trial_id);
    expect(ghostIds).toEqual([1, 2]);
    let killedAt = 0;
    const load = Promise.all(Array.from({ length: 6 }, (_, w) => work(client(bases, ledger, w), loadStudy, `k${w}`, ledger)));
    await new Promise((r) => setTimeout(r, 700));
    await victim.stop('SIGKILL');
    killedAt = Date.now();
    replicas = replicas.filter((r) => r !== victim);
    await load;
    const trials = await allTrials(admin, loadStudy);
    expectAcknowledged(ledger, loadStudy, trials);
    expect(trials.filter((t) => t.state === 'COMPLETED')).toHaveLength(40);
    // The ghost's lease runs out 2 s after it was given; then its points go to the next client first.
    await new Promise((r) => setTimeout(r, Math.max(0, killedAt + 2100 - Date.now())));
    const again = await admin('GET', `/v1/studies/${ghostStudy}/suggestions?count=2&client_id=heir`);
    expect(again.json.trials.map((t: Trial) => [t.trial_id, t.client_id, t.state])).toEqual([
      [1, 'heir', 'ACTIVE'],
      [2, 'heir', 'ACTIVE'],
    ]);
    expect(again.json.trials.map((t: Trial) => t.parameters)).toEqual(ghost.trials.map((t: Trial) => t.parameters));
    replicas.push(await startReplica());
  }, 240_000);

  it('pg_terminate_backend on every replica connection under load: retryable 503s, reconnection, nothing acknowledged lost', async () => {
    const ledger = new Ledger();
    const admin = client(bases, ledger);
    const studyId = (await admin('POST', '/v1/studies', braninStudy('cmaes', { batch_size: 4 }))).json.id as string;
    const killer = new pg.Client({ connectionString: db.url });
    await killer.connect();
    let stop = false;
    const load = Promise.all(Array.from({ length: 6 }, (_, w) => work(client(bases, ledger, w), studyId, `t${w}`, ledger, () => stop)));
    let terminated = 0;
    // Until requests in flight were cut at least twice (each round cuts every connection of every replica).
    for (let round = 0; round < 60 && (ledger.failures.get('503 database_unavailable') ?? 0) < 2; round++) {
      await new Promise((r) => setTimeout(r, 150));
      const r = await killer.query("SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'probnes-server'");
      terminated += Number(r.rows[0].n);
    }
    await new Promise((r) => setTimeout(r, 300));
    stop = true;
    await load;
    await killer.end();
    expect(terminated).toBeGreaterThan(0);
    expect(ledger.failures.get('503 database_unavailable') ?? 0).toBeGreaterThanOrEqual(2);
    expect([...ledger.failures.keys()].filter((k) => !k.startsWith('503'))).toEqual([]);
    for (const r of replicas) expect((await fetch(`${r.base}/readyz`)).status).toBe(200);
    const trials = await allTrials(admin, studyId);
    expectAcknowledged(ledger, studyId, trials);
    expect(trials.filter((t) => t.state === 'COMPLETED')).toHaveLength(ledger.observed.size);
  }, 120_000);

  it('export from SQLite, import into PostgreSQL, export again: the same document, and back', async () => {
    const ledger = new Ledger();
    const local = client(() => [sqlite.base], ledger);
    const shared = client(bases, ledger);
    const id = (await local('POST', '/v1/studies', braninStudy('prob-cmaes', { batch_size: 3, seed: 5, options: fastOptions('prob-cmaes') }))).json.id as string;
    await work(local, id, 'x', ledger, () => ledger.observed.size >= 8);
    const comparable = (doc: any) => {
      const { id: _i, created_at: _c, updated_at: _u, ...study } = doc.study;
      return { ...doc, exported_at: null, study };
    };
    const original = (await local('GET', `/v1/studies/${id}/export`)).json;
    const imported = await shared('POST', '/v1/studies/import', original);
    expect(imported.status).toBe(201);
    const fromPg = (await shared('GET', `/v1/studies/${imported.json.id}/export`)).json;
    expect(comparable(fromPg)).toEqual(comparable(original));
    const back = await local('POST', '/v1/studies/import', fromPg);
    expect(back.status).toBe(201);
    expect(comparable((await local('GET', `/v1/studies/${back.json.id}/export`)).json)).toEqual(comparable(original));
  }, 60_000);
});
