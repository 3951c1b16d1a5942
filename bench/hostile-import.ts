/**
 * Hostile request sizes against the real server process on loopback: each request below is sent
 * once, while a second client polls /healthz every 20 ms (standing for every other tenant). For each
 * it prints the answer (status, number of errors listed, bytes), the time to the answer, the longest
 * /healthz wait while it ran (how long the event loop was held), and the server's resident memory
 * before and after, with the process's peak (VmHWM) so far.
 *
 * The requests: an export whose engine_states holds 10⁶ empty objects (about 3 MB), one with 5·10⁴
 * of them, one whose trials are [0]×10⁶, one with 10⁵ trials (at the limit) each wrong, one trial whose
 * parameters hold 10⁵ wrong values; POST /v1/studies with 5·10⁴ wrong options; and POST observations
 * with one observation of 10⁵ wrong parameter values (a route whose record is not yet counted first).
 * Targets: every answer a 400 or 413 within 1 s, at most 20 errors, /healthz never held longer than
 * the request, the resident memory back near where it started.
 *
 * Usage: npm run bench:hostile-import
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { processMemory, startServer } from '../test/helpers/server-process.js';

type Doc = Record<string, unknown> & { trials: Record<string, unknown>[]; engine_states: unknown[] };

interface Case {
  name: string;
  method: 'POST';
  url: string;
  body: () => string;
}

const json = { 'content-type': 'application/json' };

async function call(base: string, method: string, url: string, body?: unknown): Promise<any> {
  const res = await fetch(base + url, { method, headers: json, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** Polls /healthz until stopped; the longest time one answer took. */
function pollHealth(base: string): { stop: () => Promise<number> } {
  let running = true;
  let worst = 0;
  const loop = (async () => {
    while (running) {
      const t = performance.now();
      try {
        await fetch(`${base}/healthz`);
      } catch {
        // counted as a wait all the same
      }
      worst = Math.max(worst, performance.now() - t);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return worst;
    },
  };
}

const mib = (x: number | undefined) => (x === undefined ? '   n/a' : x.toFixed(0).padStart(6));

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-hostile-'));
  const server = await startServer(path.join(tmp, 'bench.db'), { env: { ENGINE_WORKERS: '1', RATE_LIMIT_PER_MINUTE: '0' }, stderr: 'inherit' });
  try {
    const base = server.base;
    const study = await call(base, 'POST', '/v1/studies', { name: 'hostile', method: 'random', batch_size: 2, seed: 1, parameters: [{ name: 'x', bounds: [-5, 5] }, { name: 'y', bounds: [-5, 5] }] });
    const s = await call(base, 'GET', `/v1/studies/${study.id}/suggestions?count=2&client_id=bench`);
    await call(base, 'POST', `/v1/studies/${study.id}/observations`, { observations: s.trials.map((t: { trial_id: number }) => ({ trial_id: t.trial_id, value: 1 })) });
    const doc = (await call(base, 'GET', `/v1/studies/${study.id}/export`)) as Doc;
    const text = (v: unknown) => () => JSON.stringify(v);
    const cases: Case[] = [
      { name: 'engine_states: 10⁶ × {}', method: 'POST', url: '/v1/studies/import', body: text({ ...doc, engine_states: Array.from({ length: 1_000_000 }, () => ({})) }) },
      { name: 'engine_states: 5·10⁴ × {}', method: 'POST', url: '/v1/studies/import', body: text({ ...doc, engine_states: Array.from({ length: 50_000 }, () => ({})) }) },
      { name: 'trials: [0]×10⁶', method: 'POST', url: '/v1/studies/import', body: text({ ...doc, trials: new Array(1_000_000).fill(0) }) },
      { name: 'trials: [0]×10⁵ (the limit)', method: 'POST', url: '/v1/studies/import', body: text({ ...doc, trials: new Array(100_000).fill(0) }) },
      { name: 'trial parameters: 10⁵ wrong', method: 'POST', url: '/v1/studies/import', body: text({ ...doc, trials: [{ ...doc.trials[0], parameters: Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`p${i}`, [i]])) }] }) },
      { name: 'create: 5·10⁴ wrong options', method: 'POST', url: '/v1/studies', body: text({ name: 'x', parameters: [{ name: 'x', bounds: [0, 1] }], options: Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`o${i}`, [i]])) }) },
      { name: 'observation: 10⁵ wrong values', method: 'POST', url: `/v1/studies/${study.id}/observations`, body: text({ observations: [{ parameters: Object.fromEntries(Array.from({ length: 80_000 }, (_, i) => [`p${i}`, 'x'])), value: 1 }] }) },
    ];
    console.log(`server pid ${server.pid}; load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')} on ${os.availableParallelism()} cores\n`);
    console.log('request                          body MB  status  errors  answer KB   time ms  /healthz max ms   RSS before  RSS after  peak RSS (MiB)');
    for (const c of cases) {
      const body = c.body();
      const before = await processMemory(server.pid);
      const health = pollHealth(base);
      const t = performance.now();
      const res = await fetch(base + c.url, { method: c.method, headers: json, body });
      const answer = await res.text();
      const elapsed = performance.now() - t;
      const worst = await health.stop();
      const after = await processMemory(server.pid);
      let errors = '-';
      try {
        errors = String((JSON.parse(answer) as { errors?: unknown[] }).errors?.length ?? '-');
      } catch {
        // not JSON
      }
      console.log(
        `${c.name.padEnd(32)} ${(Buffer.byteLength(body) / 1e6).toFixed(1).padStart(7)}  ${String(res.status).padStart(6)}  ${errors.padStart(6)}  ${(answer.length / 1024).toFixed(1).padStart(9)}  ${elapsed.toFixed(0).padStart(8)}  ${worst.toFixed(0).padStart(15)}   ${mib(before?.rssMiB)}     ${mib(after?.rssMiB)}     ${mib(after?.peakRssMiB)}`,
      );
    }
  } finally {
    await server.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
