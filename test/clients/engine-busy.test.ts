/**
 * Both clients against a server whose engine queue is full: the suggestion is answered 429
 * engine_busy with Retry-After, the client waits that long and asks again, and gets its point once
 * the engine is free, without the caller seeing the refusal. The server is the real app listening on
 * loopback, with an engine whose asks wait until the test opens a gate, and one engine call per
 * tenant at a time (ENGINE_QUEUE_PER_TENANT=1).
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { ProbnesClient } from '../../clients/typescript/src/index.js';
import { buildApp } from '../../src/app.js';
import { InlineEngineRunner, type EngineRunner } from '../../src/domain/pool/engine-pool.js';
import type { EngineTask } from '../../src/domain/pool/engine-tasks.js';
import { SqliteStorage } from '../../src/storage/index.js';
import { braninStudy } from '../helpers/loop.js';
import { pythonPresent } from '../helpers/requirements.js';
import { runInClientDir } from './python-run.js';

const hasPython = pythonPresent();

let app: FastifyInstance;
afterEach(async () => {
  await app?.close();
});

/** The app on a free loopback port; its first ask waits for `open()`, and a tenant has one engine call at a time. */
async function busyServer(): Promise<{ base: string; blocked: Promise<Response>; open: () => void; studyId: string }> {
  const inner = new InlineEngineRunner();
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const engine: EngineRunner = {
    async run(task: EngineTask) {
      if (task.op === 'ask') await gate;
      return inner.run(task);
    },
    close: () => inner.close(),
  };
  app = await buildApp({
    config: { bodyLimit: 1 << 20, requestTimeoutMs: 30_000, engineQueue: { perTenant: 1, perStudy: 2, maxWaitMs: 60_000, lightMs: 50 } },
    storage: SqliteStorage.open(':memory:'),
    engine,
  });
  const base = await app.listen({ port: 0, host: '127.0.0.1' });
  const create = async (name: string) => (await app.inject({ method: 'POST', url: '/v1/studies', payload: braninStudy('prob-cmaes', { name, batch_size: 2, options: { candidates: 32 } }) })).json().id as string;
  const first = await create('first');
  const studyId = await create('second');
  // The first study's suggestion holds the tenant's one engine call until the gate opens.
  const blocked = fetch(`${base}/v1/studies/${first}/suggestions?count=1`);
  await new Promise((r) => setTimeout(r, 100));
  return { base, blocked, open, studyId };
}

/** Opens the gate once the server has refused a call (so the client saw its 429 before the engine frees up). */
function openAfterRefusal(open: () => void): void {
  const poll = async () => ((await rejected()) >= 1 ? open() : setTimeout(poll, 20));
  void poll();
}

const rejected = async () => Number(/probnes_engine_rejected_total\{method="prob-cmaes",op="ask"\} (\d+)/.exec((await app.inject({ method: 'GET', url: '/metrics' })).body)?.[1] ?? 0);

describe('clients and engine_busy', () => {
  it('TypeScript: suggest() waits out Retry-After and returns the point', async () => {
    const { base, blocked, open, studyId } = await busyServer();
    const statuses: number[] = [];
    const client = new ProbnesClient({
      baseUrl: base,
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        statuses.push(res.status);
        return res;
      },
    });
    openAfterRefusal(open);
    const t0 = Date.now();
    const got = await client.suggest(studyId, { count: 1 });
    expect(got.trials).toHaveLength(1);
    expect(statuses[0]).toBe(429);
    expect(statuses[statuses.length - 1]).toBe(200);
    // Retry-After is at least 1 s, and the client honoured it.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
    expect(await rejected()).toBeGreaterThanOrEqual(1);
    expect((await blocked).status).toBe(200);
  });

  it.skipIf(!hasPython)('Python: Client.suggest() waits out Retry-After and returns the point', async () => {
    const { base, blocked, open, studyId } = await busyServer();
    openAfterRefusal(open);
    const script = [
      'import sys, time',
      'from probnes_client import Client',
      't0 = time.time()',
      `got = Client(sys.argv[1]).suggest(sys.argv[2], count=1)`,
      'print(len(got["trials"]), round(time.time() - t0, 2))',
    ].join('\n');
    const r = await runInClientDir('python3', ['-c', script, base, studyId], { PYTHONDONTWRITEBYTECODE: '1' });
    expect(r.code, r.out).toBe(0);
    const [n, seconds] = r.out.trim().split(/\s+/).map(Number);
    expect(n).toBe(1);
    expect(seconds).toBeGreaterThanOrEqual(1);
    expect(await rejected()).toBeGreaterThanOrEqual(1);
    expect((await blocked).status).toBe(200);
  });
});
