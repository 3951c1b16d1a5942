/**
 * Many clients on one study at once: every trial is handed to exactly one client, every result
 * lands exactly once, and the generations advance as if the requests had come one by one.
 * In-process (inject, inline engine) and over loopback against a listening server whose engine
 * runs in the worker pool.
 */
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WorkerEngineRunner } from '../../src/domain/pool/engine-pool.js';
import { branin, braninStudy, fastOptions, loopApp } from '../helpers/loop.js';

type Call = (method: 'GET' | 'POST', url: string, body?: unknown) => Promise<{ status: number; json: any }>;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** CLIENTS workers, ROUNDS rounds each: ask one point, evaluate, report. */
async function hammer(call: Call, studyId: string, clients: number, rounds: number) {
  const handedTo = new Map<number, string>();
  const sent = new Map<number, number>();
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      const client = `w${c}`;
      for (let r = 0; r < rounds; r++) {
        const s = await call('GET', `/v1/studies/${studyId}/suggestions?count=1&client_id=${client}`);
        expect(s.status, JSON.stringify(s.json)).toBe(200);
        expect(s.json.trials).toHaveLength(1);
        const t = s.json.trials[0];
        expect(handedTo.get(t.trial_id) ?? client, `trial ${t.trial_id} handed out twice`).toBe(client);
        handedTo.set(t.trial_id, client);
        const value = branin(t.parameters);
        const o = await call('POST', `/v1/studies/${studyId}/observations`, { observations: [{ trial_id: t.trial_id, value }] });
        expect(o.status, JSON.stringify(o.json)).toBe(200);
        sent.set(t.trial_id, value);
      }
    }),
  );
  return { handedTo, sent };
}

async function check(call: Call, studyId: string, sent: Map<number, number>, batchSize: number) {
  const study = (await call('GET', `/v1/studies/${studyId}`)).json;
  expect(study.trial_counts.COMPLETED).toBe(sent.size);
  expect(study.trial_counts.ACTIVE).toBe(0);
  expect(study.generation).toBeGreaterThan(0);
  const listed = (await call('GET', `/v1/studies/${studyId}/trials?page_size=1000&state=COMPLETED`)).json;
  expect(listed.trials).toHaveLength(sent.size);
  for (const t of listed.trials) expect(t.value).toBe(sent.get(t.trial_id));
  // Bookkeeping: every finished generation had its batch of results; the current one does not yet.
  const perGeneration = new Map<number, number>();
  for (const t of listed.trials) perGeneration.set(t.generation, (perGeneration.get(t.generation) ?? 0) + 1);
  for (let g = 0; g < study.generation; g++) expect(perGeneration.get(g) ?? 0, `generation ${g}`).toBeGreaterThanOrEqual(batchSize);
  expect(perGeneration.get(study.generation) ?? 0).toBeLessThan(batchSize);
}

describe('concurrent clients on one study', () => {
  it('8 clients via inject: disjoint trials, every observation exactly once', async () => {
    const { app } = await loopApp();
    cleanups.push(() => app.close());
    const call: Call = async (method, url, body) => {
      const res = await app.inject({ method, url, ...(body ? { payload: body as object } : {}) });
      return { status: res.statusCode, json: res.json() };
    };
    const study = (await call('POST', '/v1/studies', braninStudy('cmaes', { batch_size: 4 }))).json;
    const { sent } = await hammer(call, study.id, 8, 6);
    expect(sent.size).toBe(48);
    await check(call, study.id, sent, 4);
  });

  it('8 clients over loopback, prob-cmaes in the worker pool: disjoint trials, every observation exactly once', async () => {
    const engine = new WorkerEngineRunner(2);
    const { app } = await loopApp({ engine });
    cleanups.push(async () => {
      await app.close();
      await engine.close();
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const call: Call = async (method, url, body) => {
      const res = await fetch(base + url, { method, ...(body ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}) });
      return { status: res.status, json: await res.json() };
    };
    const study = (await call('POST', '/v1/studies', braninStudy('prob-cmaes', { batch_size: 4, options: fastOptions('prob-cmaes') }))).json;
    const { sent, handedTo } = await hammer(call, study.id, 8, 4);
    expect(sent.size).toBe(32);
    expect(new Set(handedTo.values()).size).toBe(8);
    await check(call, study.id, sent, 4);
  });
});
