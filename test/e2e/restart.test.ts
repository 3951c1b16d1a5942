/**
 * Restart in the middle of a study: run half of it against the real server process, SIGKILL it
 * (no graceful shutdown), start it again on the same database and finish. The suggestions after
 * the restart are exactly those of an uninterrupted run on another database.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { scaledMs, waitReady } from '../helpers/server-process.js';
import { branin, braninStudy, fastOptions } from '../helpers/loop.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-restart-'));
const children: ChildProcess[] = [];

afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  fs.rmSync(tmp, { recursive: true, force: true });
});


async function start(db: string): Promise<{ base: string; child: ChildProcess; exited: Promise<unknown> }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATABASE_PATH: db, LOG_LEVEL: 'warn', LOG_PRETTY: 'false', ENGINE_WORKERS: '1' },
    stdio: 'ignore',
  });
  children.push(child);
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const base = `http://127.0.0.1:${port}`;
  await waitReady(base, exited, { pid: child.pid! });
  return { base, child, exited };
}

const json = { 'content-type': 'application/json' };
type Suggested = { trial_id: number; parameters: Record<string, number>; generation: number };

/** One sequential step: ask `count` points as `client`, report Branin for all but `keep` of them. */
async function step(base: string, id: string, client: string, count: number, keep = 0): Promise<Suggested[]> {
  const s = (await (await fetch(`${base}/v1/studies/${id}/suggestions?count=${count}&client_id=${client}`)).json()) as { trials: Suggested[] };
  const report = s.trials.slice(0, s.trials.length - keep);
  const res = await fetch(`${base}/v1/studies/${id}/observations`, { method: 'POST', headers: json, body: JSON.stringify({ observations: report.map((t) => ({ trial_id: t.trial_id, value: branin(t.parameters) })) }) });
  expect(res.status).toBe(200);
  return s.trials;
}

/** The scripted study: a mix of full batches, single points and a held trial (re-attached later). */
async function script(base: string, id: string, from: number, to: number, log: Suggested[][]): Promise<void> {
  const steps: [string, number, number][] = [['a', 3, 0], ['a', 1, 0], ['b', 2, 1], ['a', 3, 0], ['b', 1, 0], ['c', 3, 0], ['a', 2, 0], ['c', 3, 0]];
  for (let i = from; i < to; i++) log.push(await step(base, id, ...steps[i]!));
}

describe('restart', () => {
  it.each([['prob-cmaes', 3], ['lq-cmaes', 6]] as const)('SIGKILL in the middle of a %s study, restart, continue: the same suggestions as an uninterrupted run', async (method, batchSize) => {
    const body = JSON.stringify(braninStudy(method, { batch_size: batchSize, options: fastOptions(method) }));

    const ref = await start(path.join(tmp, 'ref.db'));
    const refId = ((await (await fetch(`${ref.base}/v1/studies`, { method: 'POST', headers: json, body })).json()) as { id: string }).id;
    const refLog: Suggested[][] = [];
    await script(ref.base, refId, 0, 8, refLog);
    ref.child.kill('SIGTERM');
    await ref.exited;

    const db = path.join(tmp, 'killed.db');
    const first = await start(db);
    const id = ((await (await fetch(`${first.base}/v1/studies`, { method: 'POST', headers: json, body })).json()) as { id: string }).id;
    const log: Suggested[][] = [];
    await script(first.base, id, 0, 4, log);
    first.child.kill('SIGKILL');
    await first.exited;

    const second = await start(db);
    await script(second.base, id, 4, 8, log);
    const strip = (l: Suggested[][]) => l.map((s) => s.map((t) => ({ trial_id: t.trial_id, generation: t.generation, parameters: t.parameters })));
    expect(strip(log)).toEqual(strip(refLog));
    const study = (await (await fetch(`${second.base}/v1/studies/${id}`)).json()) as { generation: number };
    expect(study.generation).toBeGreaterThanOrEqual(method === 'lq-cmaes' ? 2 : 3);
    second.child.kill('SIGTERM');
    await second.exited;
  }, scaledMs(120_000));
});
