/**
 * bench:study-size — what one suggestion and one observation cost as the study grows.
 *
 * For each storage (SQLite in memory; PostgreSQL when it answers), each method (prob-cmaes, the
 * default, and cma-es) and each size (a fresh study, 10,000 and 100,000 completed trials by
 * default), one study (d = 2, batch 10, one engine state per generation; every seventh result
 * arrived late, so completion order is not trial order) is imported (bench/lib/big-study.ts) and
 * the app is built on it in this process, with the server's engine runner (ENGINE_WORKERS threads,
 * default one per core but one, as the server starts it: every engine call crosses to a worker
 * thread, as in production; --workers 0 runs the engine inline), and requests go through app.inject
 * (no socket). Then, timed one by one, `--rounds` times:
 *
 * - GET …/suggestions?count=10: a whole generation's points (the engine draws ten, each checked
 *   against every configuration of the study);
 * - POST …/observations of those ten results: they complete the generation, so the observation
 *   runs its update (the engine's tell, with the whole history).
 *
 * The first round (a cold per-study cache: the history is read from the database) is reported
 * apart. Printed: p50 and p90 in ms per request, and the ratio of the p50 to the fresh study's
 * (same storage and method). The figures that matter are the ratios, and those between two trees
 * measured in one sitting (the machine is shared); to measure code from before a change, run this
 * file from a worktree of that commit.
 *
 *   npm run bench:study-size -- [--sizes 0,10000,100000] [--pg-sizes …] [--methods prob-cmaes,cmaes]
 *     [--rounds 30] [--storages sqlite,postgres] [--workers N] [--views N] [--out DIR]
 *
 * PostgreSQL: PROBNES_BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres) is
 * the server; a database of its own is created for the run and dropped after. When it does not
 * answer, the run says so and measures SQLite only.
 *
 * --views N (default 0): also N requests each of GET …/model/grid and …/model/importance per study.
 *
 * --out DIR: DIR/results.md (the printed table with the command, commit, machine and load) and
 * DIR/runs.jsonl.gz (one record per timed request: storage, method, size, request, ms, load
 * average then), so every median recomputes. Published: bench-results/published/2026-11-28-study-size
 * (and …-before, the tree before the incremental history, measured in the same sitting).
 */
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { createEngineRunner } from '../src/domain/index.js';
import type { MethodName } from '../src/engine/index.js';
import { PostgresStorage, SqliteStorage, type ImportedTrial, type Storage } from '../src/storage/index.js';
import { importBigStudy } from './lib/big-study.js';
import { fmt, ms, pct } from './lib/http-bench.js';
import { currentProvenance, writePublished } from './lib/provenance.js';

const { values: argv } = parseArgs({
  options: {
    sizes: { type: 'string', default: '0,10000,100000' },
    'pg-sizes': { type: 'string' },
    methods: { type: 'string', default: 'prob-cmaes,cmaes' },
    rounds: { type: 'string', default: '30' },
    storages: { type: 'string', default: 'sqlite,postgres' },
    workers: { type: 'string', default: String(Math.max(1, os.availableParallelism() - 1)) },
    views: { type: 'string', default: '0' },
    out: { type: 'string' },
  },
});
const SIZES = argv.sizes!.split(',').map(Number);
/** PostgreSQL's sizes (default: --sizes): a tree whose import is quadratic on PostgreSQL (before its migration 007) cannot import 100,000 trials in bench time. */
const PG_SIZES = argv['pg-sizes'] ? argv['pg-sizes'].split(',').map(Number) : SIZES;
const METHODS = argv.methods!.split(',') as MethodName[];
const ROUNDS = Number(argv.rounds);
const WORKERS = Number(argv.workers);
const VIEWS = Number(argv.views);
const BATCH = 10;
const PG_URL = process.env.PROBNES_BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

/** `n` completed trials of the study's two parameters (deterministic), every seventh completed 50 s late. */
function trialsOf(n: number): { trials: ImportedTrial[]; iso: (k: number) => string } {
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
  return { trials, iso };
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
const records: { storage: string; method: string; trials: number; request: string; ms: number; first: boolean; load1: number }[] = [];
const say = (line: string) => {
  printed.push(line);
  console.log(line);
};
const load = () => os.loadavg().map((x) => x.toFixed(1)).join(' ');

/** A storage per measured study: SQLite in memory, or the run's PostgreSQL database (emptied first). */
interface Backend {
  name: string;
  /** `importing`: for the import only (PostgreSQL: a statement timeout long enough for 100,000 trials in one statement). */
  open(importing?: boolean): Promise<Storage>;
  close(): Promise<void>;
}

/** A statement on the server's maintenance database, on a connection of its own (none is held between them). */
async function admin(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
  c.on('error', () => {});
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end().catch(() => {});
  }
}

async function postgresBackend(): Promise<Backend | string> {
  const name = `studysize_${process.pid}_${randomBytes(3).toString('hex')}`;
  try {
    await admin(`CREATE DATABASE ${name}`);
  } catch (err) {
    return `PostgreSQL at ${PG_URL} does not answer (${(err as Error).message})`;
  }
  const u = new URL(PG_URL);
  u.pathname = `/${name}`;
  const url = u.toString();
  return {
    name: 'postgres',
    async open(importing = false) {
      if (importing) {
        const c = new pg.Client({ connectionString: url });
        await c.connect();
        await c.query('DELETE FROM studies').catch(() => {}); // none before the first migration
        await c.end();
      }
      // The server's settings (10 s statement timeout) for the measured requests.
      return PostgresStorage.open({ url, poolSize: 4, ...(importing ? { statementTimeoutMs: 1_800_000 } : {}) });
    },
    async close() {
      await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

interface Measured {
  suggest: number[];
  observe: number[];
  firstSuggest: number;
  firstObserve: number;
}

async function measure(backend: Backend, method: MethodName, n: number): Promise<Measured> {
  const id = `bench-size-${method}-${n}`;
  const { trials, iso } = trialsOf(n);
  const t0 = Date.now();
  const importer = await backend.open(true);
  await importBigStudy(importer, { id, name: 'size', batch: BATCH, trials, at: iso, updatedAt: iso(n + 50), method });
  // SQLite in memory: the importer is the database itself.
  const storage = backend.name === 'sqlite' ? importer : (await importer.close(), await backend.open());
  const imported = (Date.now() - t0) / 1000;
  const engine = createEngineRunner(WORKERS);
  const app = await buildApp({ config: { bodyLimit: 1024 * 1024, requestTimeoutMs: 120_000, rateLimitPerMinute: 1e9 }, storage, logger: false, engine });
  const base = `/v1/studies/${id}`;
  try {
    // The worker threads start (and load the engine) on their first call: a throwaway study's
    // first round, so that the measured study's first request is cold in its cache only.
    const warm = await app.inject({ method: 'POST', url: '/v1/studies', payload: { name: 'warm-up', method, parameters: [{ name: 'x', bounds: [-1, 1] }] } });
    const warmId = warm.json().id as string;
    const got = await timed(app, 'GET', `/v1/studies/${warmId}/suggestions?count=1&client_id=warm`);
    await timed(app, 'POST', `/v1/studies/${warmId}/observations`, { observations: [{ trial_id: got.body.trials[0].trial_id, value: 1 }] });
    const round = async () => {
      const s = await timed(app, 'GET', `${base}/suggestions?count=${BATCH}&client_id=bench`);
      const ts = s.body.trials as { trial_id: number; parameters: { x0: number; x1: number } }[];
      if (ts.length !== BATCH) throw new Error(`suggestions: ${ts.length} trials (${s.body.reason})`);
      const o = await timed(app, 'POST', `${base}/observations`, { observations: ts.map((t) => ({ trial_id: t.trial_id, value: t.parameters.x0 ** 2 + t.parameters.x1 ** 2 })) });
      const rec = (request: string, t: number, first: boolean) => records.push({ storage: backend.name, method, trials: n, request, ms: t, first, load1: os.loadavg()[0]! });
      return { s: s.t, o: o.t, rec };
    };
    const first = await round();
    first.rec('suggest', first.s, true);
    first.rec('observe', first.o, true);
    const out: Measured = { suggest: [], observe: [], firstSuggest: first.s, firstObserve: first.o };
    for (let i = 0; i < ROUNDS; i++) {
      const r = await round();
      out.suggest.push(r.s);
      out.observe.push(r.o);
      r.rec('suggest', r.s, false);
      r.rec('observe', r.o, false);
    }
    for (const [name, url] of [
      ['model/grid', `${base}/model/grid?x=x0&y=x1`],
      ['model/importance', `${base}/model/importance`],
    ] as const) {
      for (let i = 0; i < VIEWS; i++) records.push({ storage: backend.name, method, trials: n, request: name, ms: (await timed(app, 'GET', url)).t, first: i === 0, load1: os.loadavg()[0]! });
    }
    console.error(`  ${backend.name} ${method} ${n}: imported in ${imported.toFixed(1)} s; load ${load()}`);
    return out;
  } finally {
    await app.close();
    await engine.close();
    await storage.close();
  }
}

async function main() {
  const started = new Date();
  const loadStart = os.loadavg();
  const backends: Backend[] = [];
  const storages = argv.storages!.split(',');
  if (storages.includes('sqlite')) backends.push({ name: 'sqlite', open: async () => SqliteStorage.open(':memory:'), close: async () => {} });
  if (storages.includes('postgres')) {
    const b = await postgresBackend();
    if (typeof b === 'string') say(`PostgreSQL not measured: ${b}.`);
    else backends.push(b);
  }
  say(`In-process (app.inject), ${WORKERS > 0 ? `engine in worker threads (ENGINE_WORKERS=${WORKERS}, as the server)` : 'engine inline'}; SQLite in memory${backends.some((b) => b.name === 'postgres') ? ', PostgreSQL on 127.0.0.1' : ''}; batch ${BATCH}, d = 2; ${ROUNDS} rounds after the first; ms.`);
  say(`Load average ${load()} on ${os.availableParallelism()} cores at the start.`);
  say('');
  say('| storage | method | trials | suggest p50 | p90 | × fresh | observe p50 | p90 | × fresh | first (cold) suggest / observe | load |');
  say('|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|');
  try {
    for (const backend of backends) {
      for (const method of METHODS) {
        let fresh: Measured | null = null;
        const sizes = backend.name === 'postgres' ? PG_SIZES : SIZES;
        for (const n of sizes) {
          const m = await measure(backend, method, n);
          if (n === Math.min(...sizes)) fresh = m;
          const ratio = (xs: number[], ys: number[] | undefined) => (ys ? `${(pct(xs, 50) / pct(ys, 50)).toFixed(2)}` : '');
          say(
            `| ${backend.name} | ${method} | ${n} | ${fmt(pct(m.suggest, 50))} | ${fmt(pct(m.suggest, 90))} | ${ratio(m.suggest, fresh?.suggest)} | ${fmt(pct(m.observe, 50))} | ${fmt(pct(m.observe, 90))} | ${ratio(m.observe, fresh?.observe)} | ${fmt(m.firstSuggest)} / ${fmt(m.firstObserve)} | ${os.loadavg()[0]!.toFixed(1)} |`,
          );
        }
      }
    }
  } finally {
    for (const b of backends) await b.close();
  }
  say('');
  say(`× fresh: the p50 over the smallest size's p50 (same storage and method). Load: the 1-minute load average after each row. Load average at the end ${load()}.`);
  if (argv.out) {
    const command = `npm run bench:study-size -- ${process.argv.slice(2).join(' ')}`.trim();
    for (const f of writePublished(argv.out, { title: 'bench:study-size', provenance: currentProvenance(command), started, loadStart, printed, records })) console.log(`wrote ${f}`);
  }
}

await main();
