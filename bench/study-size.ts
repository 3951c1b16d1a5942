/**
 * bench:study-size — what one suggestion and one model view cost as the study grows.
 *
 * For each size (1,000 and 25,600 completed trials by default) one CMA-ES study (d = 2, batch 10,
 * one engine state per generation; every seventh result arrived late, so completion order is not
 * trial order) is imported into an in-memory SQLite database, and the app is built on it in this
 * process (makeTestApp: the inline engine runner, no HTTP socket: app.inject). Then, timed one by one:
 *
 * - `--rounds` suggestions of a whole generation (GET …/suggestions?count=10: the engine draws ten
 *   new points, each checked against every configuration of the study), each followed by their
 *   observations (not timed; they complete the generation, whose update the observation runs):
 *   what a suggestion that draws points costs once the per-study cache is warm (the first, which
 *   reads the history, is reported apart);
 * - `--views` requests of GET …/model/grid?x=x0&y=x1 (n = 30, and n = 2: four predictions, so
 *   that the reads show) and of …/model/importance (the GP
 *   fitted for the view is fitted on the first request and reused: the first is reported apart).
 *
 * Printed: median and p90 in ms per size. The figures that matter are the ratios between sizes
 * and between two trees measured in one sitting (the machine is shared); to measure code from
 * before a change, run this file from a worktree of that commit.
 *
 *   npm run bench:study-size -- [--sizes 1000,25600] [--rounds 40] [--views 8] [--out DIR]
 *
 * --out DIR: DIR/results.md (the printed table with the command, commit, machine and load) and
 * DIR/runs.jsonl.gz (one record per timed request: size, request, ms, load average then), so every
 * median recomputes. Figures of 2026-11-26: bench-results/published/2026-11-26-study-size (this
 * tree) and …-study-size-before (fa399b2, before the cached keys and the bounded views).
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { SqliteStorage, type ImportedTrial, type Storage } from '../src/storage/index.js';
import { makeTestApp } from '../test/helpers/app.js';
import { importBigStudy } from './lib/big-study.js';
import { fmt, ms, pct } from './lib/http-bench.js';
import { currentProvenance, writePublished } from './lib/provenance.js';

const { values: argv } = parseArgs({
  options: { sizes: { type: 'string', default: '1000,25600' }, rounds: { type: 'string', default: '40' }, views: { type: 'string', default: '8' }, out: { type: 'string' } },
});
const SIZES = argv.sizes!.split(',').map(Number);
const ROUNDS = Number(argv.rounds);
const VIEWS = Number(argv.views);
const BATCH = 10;
const STUDY = 'bench-size';

/** One study with `n` completed trials and a state per generation of BATCH (the latest with no trial yet). */
async function importStudy(storage: Storage, n: number): Promise<void> {
  const t0 = Date.UTC(2024, 0, 1);
  const iso = (k: number) => new Date(t0 + k * 1000).toISOString();
  const trials: ImportedTrial[] = Array.from({ length: n }, (_, i) => {
    const u = [Math.sin(i * 0.7) * 0.9, Math.cos(i * 1.3) * 0.9];
    const done = iso(i % 7 === 3 ? i + 50 : i);
    return {
      trialId: i + 1, state: 'COMPLETED', generation: Math.floor(i / BATCH), clientId: null, leaseExpiresAt: null,
      parameters: { x0: u[0]! * 5, x1: u[1]! * 5 }, point: u, value: u[0]! ** 2 + u[1]! ** 2, stderr: null,
      failureReason: null, late: false, source: 'suggested', createdAt: iso(i), completedAt: done, updatedAt: done,
    };
  });
  await importBigStudy(storage, { id: STUDY, name: 'size', batch: BATCH, trials, at: iso, updatedAt: iso(n + 50) });
}

async function timed(app: FastifyInstance, method: 'GET' | 'POST', url: string, payload?: unknown): Promise<{ t: number; body: any }> {
  const t = process.hrtime.bigint();
  const res = await app.inject({ method, url, ...(payload ? { payload: payload as object } : {}) });
  const took = ms(t);
  if (res.statusCode !== 200) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
  return { t: took, body: res.json() };
}

/** What --out writes: the printed lines, and one record per timed request. */
const printed: string[] = [];
const records: { trials: number; request: string; ms: number; first: boolean; load1: number }[] = [];
const say = (line: string) => {
  printed.push(line);
  console.log(line);
};
const record = (n: number, request: string, t: number, first = false) => records.push({ trials: n, request, ms: t, first, load1: os.loadavg()[0]! });
const row = (n: number, what: string, xs: number[], extra = '') => say(`| ${n} | ${what} | ${fmt(pct(xs, 50))} | ${fmt(pct(xs, 90))} | ${extra} |`);

async function main() {
  const started = new Date();
  const loadStart = os.loadavg();
  say(`In-process (app.inject), in-memory SQLite; ms; load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')} on ${os.availableParallelism()} cores at the start.`);
  say('');
  say('| trials | request | p50 | p90 | note |');
  say('|---:|---|---:|---:|---|');
  for (const n of SIZES) {
    const storage = SqliteStorage.open(':memory:');
    await importStudy(storage, n);
    const { app } = await makeTestApp({ storage });
    try {
      const suggest = async () => {
        const s = await timed(app, 'GET', `/v1/studies/${STUDY}/suggestions?count=${BATCH}&client_id=bench`);
        const ts = s.body.trials as { trial_id: number; parameters: { x0: number; x1: number } }[];
        if (ts.length !== BATCH) throw new Error(`suggestions: ${ts.length} trials (${s.body.reason})`);
        await timed(app, 'POST', `/v1/studies/${STUDY}/observations`, { observations: ts.map((t) => ({ trial_id: t.trial_id, value: t.parameters.x0 ** 2 + t.parameters.x1 ** 2 })) });
        return s.t;
      };
      const first = await suggest();
      record(n, `GET suggestions?count=${BATCH}`, first, true);
      const times: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        times.push(await suggest());
        record(n, `GET suggestions?count=${BATCH}`, times[i]!);
      }
      row(n, `GET suggestions?count=${BATCH}`, times, `first (cold cache) ${fmt(first)}`);
      for (const [name, url] of [
        ['GET model/grid (n=30)', `/v1/studies/${STUDY}/model/grid?x=x0&y=x1`],
        // Four predictions: what is left is the request's reads and the conditioning on the points.
        ['GET model/grid (n=2)', `/v1/studies/${STUDY}/model/grid?x=x0&y=x1&n=2`],
        ['GET model/importance', `/v1/studies/${STUDY}/model/importance`],
      ] as const) {
        const firstView = await timed(app, 'GET', url);
        record(n, name, firstView.t, true);
        const views: number[] = [];
        for (let i = 0; i < VIEWS; i++) {
          views.push((await timed(app, 'GET', url)).t);
          record(n, name, views[i]!);
        }
        const points = Array.isArray(firstView.body.points) ? `, ${firstView.body.points.length} points drawn` : '';
        row(n, name, views, `first (fits the GP) ${fmt(firstView.t)}; n_points ${firstView.body.n_points}${points}`);
      }
    } finally {
      await app.close();
    }
  }
  if (argv.out) {
    const command = `npx tsx bench/study-size.ts ${process.argv.slice(2).join(' ')}`.trim();
    for (const f of writePublished(argv.out, { title: 'bench:study-size', provenance: currentProvenance(command), started, loadStart, printed, records })) console.log(`wrote ${f}`);
  }
}

await main();
