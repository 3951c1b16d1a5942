/**
 * bench:bbob's external peers (bench/lib/bbob-peers.ts): the Node side of the line protocol, driven by
 * fake runners (small Node programs standing in for bench/peers/nlopt_runner.py, so the suite needs
 * neither Python nor NLopt), the command line's peer variants, and the ECDF area worked by hand.
 */
import { describe, expect, it } from 'vitest';
import { expandBbobJobs, parseBbobConfig } from '../../bench/lib/bbob-args.js';
import { renderBbobReport } from '../../bench/lib/bbob-report.js';
import { runPeer, runPeerBbob, type PeerJob, type PeerRunner } from '../../bench/lib/bbob-peers.js';
import { ecdfArea, ecdfPoints, toBbobRecord, type BbobRunRecord } from '../../bench/lib/bbob-score.js';
import { bbobProblem } from '../../src/engine/benchmarks/bbob.js';

/** A runner written in JavaScript: `body` runs with `job` (the first line) and `ask(x)` → Promise<y>, `send(obj)`. */
function fake(body: string): PeerRunner {
  const program = `
    const rl = require('node:readline').createInterface({ input: process.stdin });
    const send = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
    const waiting = [];
    let job = null;
    rl.on('line', (line) => {
      const m = JSON.parse(line);
      if (job === null) { job = m; main().catch((e) => { send({ error: String(e) }); process.exit(1); }); }
      else waiting.shift()(m.y);
    });
    const ask = (x) => new Promise((resolve) => { waiting.push(resolve); send({ x }); });
    async function main() { ${body} }
  `;
  return { command: process.execPath, args: ['-e', program] };
}

const job = (budget: number): PeerJob => ({ method: 'bobyqa', dim: 2, budget, x0: [0, 0], step: 2, lower: [-5, -5], upper: [5, 5], seed: 1, xtol_rel: 1e-10 });

describe('the peer line protocol (fake runners)', () => {
  it('answers every proposed point with the objective, records restarts and stops at done', async () => {
    const runner = fake(`
      send({ ready: true, algorithm: 'FAKE', nlopt: '0.0' });
      const ys = [];
      for (let k = 0; k < 3; k++) ys.push(await ask([k, -k]));
      send({ restart: 1, after: 3, start: [1, 1], reason: 'converged' });
      for (let k = 3; k < job.budget; k++) ys.push(await ask([k, 0.5]));
      // The runner checks the answers itself: the objective below is x0 + 10·x1.
      if (ys.join() !== [0, -9, -18, 8, 9].join()) throw new Error('wrong answers ' + ys.join());
      send({ done: true, evaluations: job.budget, restarts: 1 });
    `);
    const r = await runPeer(job(5), (x) => x[0] + 10 * x[1], runner);
    expect(r.values).toEqual([0, -9, -18, 8, 9]);
    expect(r.restart_at).toEqual([3]);
    expect(r.restarts).toBe(1);
    expect(r.algorithm).toBe('FAKE');
    expect(r.elapsed_ms).toHaveLength(5);
  });

  it('evaluates the project\'s BBOB function at the point projected onto the box', async () => {
    // Points outside [−5, 5]² (NLopt's NEWUOA is unconstrained) are evaluated where the service would evaluate them.
    const runner = fake(`
      send({ ready: true, algorithm: 'FAKE', nlopt: '0.0' });
      await ask([7, -1]); await ask([0.25, -9]); await ask([1e-3, 2]);
      send({ done: true, evaluations: 3, restarts: 0 });
    `);
    const r = await runPeerBbob({ peer: 'newuoa', fn: 8, dim: 2, instance: 3, budget: 3, priorMean: [0, 0], priorStd: 2, box: { lower: [-5, -5], upper: [5, 5] }, tag: 'newuoa' }, runner);
    const p = bbobProblem(8, 2, 3);
    expect(r.values).toEqual([p.f([5, -1]), p.f([0.25, -5]), p.f([1e-3, 2])]);
    expect(r.optimum).toBe(p.optimum);
    expect(r.generation_ends).toEqual([1, 2, 3]);
  });

  it('rejects a runner that breaks the protocol', async () => {
    const f = (x: readonly number[]) => x[0];
    const overBudget = fake(`for (let k = 0; k < 3; k++) await ask([0, 0]); send({ done: true, evaluations: 3, restarts: 0 });`);
    await expect(runPeer(job(2), f, overBudget)).rejects.toThrow(/more than the budget of 2/);
    const badPoint = fake(`await ask([0, 0, 0]);`);
    await expect(runPeer(job(2), f, badPoint)).rejects.toThrow(/invalid point/);
    const nanPoint = fake(`process.stdout.write('{"x": [0, NaN]}\\n');`);
    await expect(runPeer(job(2), f, nanPoint)).rejects.toThrow(/not JSON/);
    const error = fake(`throw new Error('degenerate model');`);
    await expect(runPeer(job(2), f, error)).rejects.toThrow(/runner error: Error: degenerate model/);
    const exits = fake(`await ask([0, 0]); process.exit(3);`);
    await expect(runPeer(job(2), f, exits)).rejects.toThrow(/exited \(status 3\) before it finished/);
    const miscounts = fake(`await ask([0, 0]); send({ done: true, evaluations: 2, restarts: 0 });`);
    await expect(runPeer(job(2), f, miscounts)).rejects.toThrow(/counted 2 evaluations, the benchmark 1/);
    await expect(runPeer(job(2), f, { command: '/nonexistent/python3', args: [] })).rejects.toThrow(/cannot start/);
  });
});

describe('peers on the command line and in the report', () => {
  it('bobyqa and newuoa are variants with the protocol of the service methods', () => {
    const c = parseBbobConfig(['--methods', 'prob-cmaes,bobyqa,newuoa', '--dims', '5', '--functions', '1-2', '--instances', '1-3']);
    expect(c.budgetPerDim).toEqual([2, 5, 10, 20, 50]);
    const jobs = expandBbobJobs(c);
    expect(jobs).toHaveLength(3 * 2 * 3);
    const peer = jobs.find((j) => j.variant.label === 'newuoa')!;
    expect(peer.spec).toBeNull();
    expect(peer.peer).toMatchObject({ peer: 'newuoa', dim: 5, budget: 250, priorMean: [0, 0, 0, 0, 0], priorStd: 2, box: { lower: Array(5).fill(-5), upper: Array(5).fill(5) } });
    expect(peer.effectiveOptions).toMatchObject({ algorithm: 'LN_NEWUOA' });
    const service = jobs.find((j) => j.variant.label === 'prob-cmaes')!;
    expect(service.peer).toBeNull();
    expect(service.spec!.priorStd).toEqual(Array(5).fill(peer.peer!.priorStd));
    expect(() => parseBbobConfig(['--methods', 'bobyqa:paper'])).toThrow(/no profiles/);
  });

  it('a peer run becomes a runs.jsonl record, and the report has the ECDF area', async () => {
    const c = parseBbobConfig(['--methods', 'bobyqa', '--dims', '2', '--functions', '1', '--instances', '1', '--budget-per-dim', '1,2']);
    const [j] = expandBbobJobs(c);
    const p = bbobProblem(1, 2, 1);
    // Hits x_opt at the third evaluation: f − f_opt = 0 from then on (every target at 3/2 = 1.5 evaluations/d).
    const runner = fake(`send({ ready: true, algorithm: 'FAKE', nlopt: '0.0' }); await ask([0, 0]); await ask([1, 0]); await ask(${JSON.stringify(p.argmin)}); await ask([0, 1]); send({ done: true, evaluations: 4, restarts: 0 });`);
    const r = await runPeerBbob(j.peer!, runner);
    const rec: BbobRunRecord = toBbobRecord(j, r, c.budgetPerDim, { commit: 'abc', dirty: false, command: 'test' });
    expect(rec.trajectory[rec.trajectory.length - 1]).toEqual([3, 0]);
    expect(rec.budget).toBe(4);
    const md = renderBbobReport([rec], { header: [], budgetPerDim: c.budgetPerDim, variants: ['bobyqa'], failures: 0 });
    // ECDF: 0 until 1.5, then 1 (plus whatever the first two points reach) → area over [1, 2] ≥ (ln 2 − ln 1.5)/ln 2.
    const area = ecdfArea(ecdfPoints([rec]), 1, 2);
    expect(area).toBeGreaterThanOrEqual(Math.log(2 / 1.5) / Math.log(2));
    expect(md).toContain('### ECDF area over 1·d…2·d');
    expect(md).toContain(`| 2 | ${area.toFixed(3)} |`);
  });

  it('the ECDF area by hand', () => {
    // F = 0 on [1, 2), 0.5 on [2, 5), 1 from 5; over [1, 10] on a log scale:
    // (0.5·ln(5/2) + 1·ln(10/5)) / ln 10.
    const pts = [{ x: 0.5, y: 0 }, { x: 2, y: 0.5 }, { x: 5, y: 1 }];
    expect(ecdfArea(pts, 1, 10)).toBeCloseTo((0.5 * Math.log(2.5) + Math.log(2)) / Math.log(10), 14);
    // A point before lo counts from lo; points beyond hi do not count.
    expect(ecdfArea([{ x: 0.1, y: 0.2 }, { x: 20, y: 1 }], 1, 10)).toBeCloseTo(0.2, 14);
    expect(ecdfArea([], 1, 50)).toBe(0);
    expect(() => ecdfArea(pts, 5, 5)).toThrow(RangeError);
  });
});
