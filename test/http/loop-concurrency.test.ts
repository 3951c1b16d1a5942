/**
 * Many clients on one study at once: every trial is handed to exactly one client, every result
 * lands exactly once, and the generations advance as if the requests had come one by one.
 * In-process (inject, inline engine) and over loopback against a listening server whose engine
 * runs in the worker pool.
 */
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WorkerEngineRunner } from '../../src/domain/pool/engine-pool.js';
import { braninStudy, fastOptions, loopApp } from '../helpers/loop.js';
import { check, hammer, type Call } from '../helpers/loop-checks.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

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
    expect(new Set(await check(call, study.id, sent))).toEqual(new Set([4]));
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
    // The default: Powell's start phase (ALGORITHM.md §29) for the first 20 results, whose generations
    // (the stencil of 2d + 1 = 5, then one result each) advance under eight clients at once, then
    // natural-gradient generations of batch_size.
    const study = (await call('POST', '/v1/studies', braninStudy('prob-cmaes', { batch_size: 4, options: fastOptions('prob-cmaes') }))).json;
    const { sent, handedTo } = await hammer(call, study.id, 8, 4);
    expect(sent.size).toBe(32);
    expect(new Set(handedTo.values()).size).toBe(8);
    const sizes = await check(call, study.id, sent);
    expect(sizes[0]).toBe(5);
    expect(sizes.slice(1)).toContain(1);
    // The hand-over happened too: of the 12 results after the 20th at most 8 (one per client) are of a
    // generation already superseded, so a later one ends the phase (generations of batch_size since).
    expect(sizes.at(-1)).toBe(4);
  });
});
