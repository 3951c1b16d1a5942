/**
 * The loop on PostgreSQL, at the HTTP level and cheaply (in one process): two apps, each with its
 * own pool, cache and in-process lock, share one database like two replicas. Many clients sent
 * alternately to both: no trial handed out twice, every result exactly once, generations as if the
 * requests had come one by one. One client alternating between them reproduces, point for point,
 * the trajectory of one SQLite app. /readyz and in-flight requests while the database is cut off
 * (through a proxy the test closes), and the pool reconnecting by itself afterwards.
 */
import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startPhaseLength } from '../../src/engine/strategies/probnes-params.js';
import { PostgresStorage, type Storage } from '../../src/storage/index.js';
import { check, hammer, type Call } from '../helpers/loop-checks.js';
import { branin, braninStudy, fastOptions, loopApp } from '../helpers/loop.js';
import { createTestDatabase, postgresServer, type TestDatabase } from '../helpers/postgres.js';

const server = postgresServer();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

let replicas = 0;
async function replica(url: string, opts: { connectTimeoutMs?: number } = {}): Promise<{ call: Call; storage: Storage; metrics: () => Promise<string> }> {
  const storage = await PostgresStorage.open({ url, poolSize: 4, ...opts });
  // Study ids unique across the replicas of the file (they share the database).
  const { app } = await loopApp({ storage, idPrefix: `r${++replicas}` });
  cleanups.push(async () => {
    await app.close();
    await storage.close();
  });
  const call: Call = async (method, url, body) => {
    const res = await app.inject({ method, url, ...(body ? { payload: body as object } : {}) });
    return { status: res.statusCode, json: res.body ? res.json() : null };
  };
  const metrics = async () => (await app.inject({ method: 'GET', url: '/metrics' })).body;
  return { call, storage, metrics };
}

/** A TCP proxy to PostgreSQL that the test can cut (every connection reset, nothing accepted) and restore. */
async function cuttableProxy(target: URL): Promise<{ url: string; cut(): Promise<void>; restore(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  let listener: net.Server | null = null;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve) => {
      listener = net.createServer((client) => {
        const upstream = net.connect(Number(target.port || 5432), target.hostname);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => {});
        }
        client.pipe(upstream).pipe(client);
      });
      listener.listen(port, '127.0.0.1', () => {
        port = (listener!.address() as net.AddressInfo).port;
        resolve();
      });
    });
  await listen();
  const url = new URL(target);
  url.host = `127.0.0.1:${port}`;
  return {
    url: url.toString(),
    cut: async () => {
      // close() calls back once every connection is gone, so the connections go first.
      const closed = new Promise<void>((resolve) => listener!.close(() => resolve()));
      for (const s of sockets) s.resetAndDestroy();
      await closed;
    },
    restore: listen,
  };
}

describe.skipIf(!server)('the loop on PostgreSQL (two apps sharing one database)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase(server!);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('8 clients alternating between two replicas: disjoint trials, every observation exactly once', async () => {
    const a = await replica(db.url);
    const b = await replica(db.url);
    const study = (await a.call('POST', '/v1/studies', braninStudy('cmaes', { batch_size: 4 }))).json;
    const { sent, handedTo } = await hammer([a.call, b.call], study.id, 8, 5);
    expect(sent.size).toBe(40);
    expect(new Set(handedTo.values()).size).toBe(8);
    for (const r of [a, b]) expect(new Set(await check(r.call, study.id, sent))).toEqual(new Set([4]));
  });

  it('one client alternating between two replicas follows the trajectory of one SQLite process', async () => {
    const TRIALS = 25;
    const sqlite = await loopApp();
    cleanups.push(() => sqlite.app.close());
    const local: Call = async (method, url, body) => {
      const res = await sqlite.app.inject({ method, url, ...(body ? { payload: body as object } : {}) });
      return { status: res.statusCode, json: res.json() };
    };
    const a = await replica(db.url);
    const b = await replica(db.url);
    const run = async (calls: Call[]) => {
      const body = braninStudy('prob-cmaes', { batch_size: 3, seed: 11, options: fastOptions('prob-cmaes') });
      const study = (await calls[0]!('POST', '/v1/studies', body)).json;
      const points: Record<string, number>[] = [];
      for (let i = 0; i < TRIALS; i++) {
        const call = calls[i % calls.length]!;
        const s = await call('GET', `/v1/studies/${study.id}/suggestions?count=1&client_id=c`);
        expect(s.status, JSON.stringify(s.json)).toBe(200);
        const t = s.json.trials[0];
        points.push(t.parameters);
        const o = await calls[(i + 1) % calls.length]!('POST', `/v1/studies/${study.id}/observations`, { observations: [{ trial_id: t.trial_id, value: branin(t.parameters) }] });
        expect(o.status, JSON.stringify(o.json)).toBe(200);
      }
      return { points, generation: (await calls[0]!('GET', `/v1/studies/${study.id}`)).json.generation };
    };
    const reference = await run([local]);
    const replicated = await run([a.call, b.call]);
    // Through Powell's start phase and its hand-over (ALGORITHM.md §29): the stencil of 2d + 1 = 5 is
    // generation 0, each of the next L − 5 results a generation, then generations of batch_size 3.
    const L = startPhaseLength(2, null);
    expect(reference.generation).toBe(1 + (L - 5) + Math.floor((TRIALS - L) / 3));
    expect(replicated).toEqual(reference);
  });

  it('a replica serving a study alone starts each request from its last commit (one statement per request) and follows the SQLite trajectory', async () => {
    const sqlite = await loopApp();
    cleanups.push(() => sqlite.app.close());
    const local: Call = async (method, url, body) => {
      const res = await sqlite.app.inject({ method, url, ...(body ? { payload: body as object } : {}) });
      return { status: res.statusCode, json: res.json() };
    };
    const a = await replica(db.url);
    const statements = () => a.storage.poolStats()!.statements;
    const run = async (call: Call, counted: boolean) => {
      const body = braninStudy('prob-cmaes', { batch_size: 3, seed: 12, options: fastOptions('prob-cmaes') });
      const study = (await call('POST', '/v1/studies', body)).json;
      const points: Record<string, number>[] = [];
      let perRequest: number[] = [];
      for (let i = 0; i < 12; i++) {
        const s0 = counted ? statements() : 0;
        const s = await call('GET', `/v1/studies/${study.id}/suggestions?count=1&client_id=c`);
        const s1 = counted ? statements() : 0;
        const t = s.json.trials[0];
        points.push(t.parameters);
        const o = await call('POST', `/v1/studies/${study.id}/observations`, { observations: [{ trial_id: t.trial_id, value: branin(t.parameters) }] });
        expect(o.status, JSON.stringify(o.json)).toBe(200);
        if (counted) perRequest.push(s1 - s0, statements() - s1);
      }
      // The first request loads; a generation's update reads the completed history once more when
      // the per-study cache of it is cold (the first update). Every other request: the commit alone.
      perRequest = perRequest.slice(1);
      return { points, generation: (await call('GET', `/v1/studies/${study.id}`)).json.generation, perRequest };
    };
    const reference = await run(local, false);
    const warm = await run(a.call, true);
    expect(warm.points).toEqual(reference.points);
    expect(warm.generation).toBe(reference.generation);
    expect(warm.perRequest.filter((n) => n !== 1).length, JSON.stringify(warm.perRequest)).toBeLessThanOrEqual(1);
  });

  it('a warm replica sees what other replicas changed: a pause, a resume, a deletion', async () => {
    const a = await replica(db.url);
    const b = await replica(db.url);
    const study = (await a.call('POST', '/v1/studies', braninStudy('cmaes', { batch_size: 4 }))).json;
    const url = `/v1/studies/${study.id}`;
    const t1 = (await a.call('GET', `${url}/suggestions?count=1&client_id=c1`)).json.trials[0];
    // Paused on B: A's cached state (ACTIVE) must not hand out a new point.
    expect((await b.call('PATCH', url, { state: 'PAUSED' })).status).toBe(200);
    const paused = await a.call('GET', `${url}/suggestions?count=1&client_id=c2`);
    expect(paused.json).toMatchObject({ trials: [], reason: 'study_paused' });
    // A commits while paused (a result), so its cached state says PAUSED; resumed on B, A must hand out points again.
    expect((await a.call('POST', `${url}/observations`, { observations: [{ trial_id: t1.trial_id, value: branin(t1.parameters) }] })).status).toBe(200);
    expect((await b.call('PATCH', url, { state: 'ACTIVE' })).status).toBe(200);
    const resumed = await a.call('GET', `${url}/suggestions?count=1&client_id=c3`);
    expect(resumed.status).toBe(200);
    expect(resumed.json.trials).toHaveLength(1);
    expect(resumed.json.reason).toBeNull();
    // Deleted on B: A answers 404, not from its cache.
    expect((await b.call('DELETE', url)).status).toBe(204);
    expect((await a.call('GET', `${url}/suggestions?count=1&client_id=c3`)).status).toBe(404);
  });

  it('/readyz is 503 while the database is unreachable; requests fail with a retryable 503; the pool reconnects by itself', async () => {
    const proxy = await cuttableProxy(new URL(db.url));
    const r = await replica(proxy.url, { connectTimeoutMs: 1000 });
    expect((await r.call('GET', '/readyz')).status).toBe(200);
    const study = (await r.call('POST', '/v1/studies', braninStudy('cmaes'))).json;
    const metrics = await r.metrics();
    expect(metrics).toMatch(/^probnes_db_pool_max 4$/m);
    expect(metrics).toMatch(/^probnes_db_pool_connections [1-4]$/m);
    await proxy.cut();
    const ready = await r.call('GET', '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.json).toMatchObject({ code: 'not_ready', status: 503 });
    const s = await r.call('GET', `/v1/studies/${study.id}/suggestions?count=1`);
    expect(s.status).toBe(503);
    expect(s.json).toMatchObject({ code: 'database_unavailable', status: 503 });
    await proxy.restore();
    expect((await r.call('GET', '/readyz')).status).toBe(200);
    const again = await r.call('GET', `/v1/studies/${study.id}/suggestions?count=1`);
    expect(again.status).toBe(200);
    expect(again.json.trials).toHaveLength(1);
    // The connections the cut killed were counted and replaced.
    expect(Number(/^probnes_db_connection_errors (\d+)$/m.exec(await r.metrics())?.[1])).toBeGreaterThan(0);
    cleanups.push(proxy.cut);
  });
});
