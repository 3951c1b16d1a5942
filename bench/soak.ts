/**
 * bench:soak — the real server under a mixed load for a long time: does its memory stay bounded,
 * and is every acknowledged observation still there at the end (after a SIGKILL too)?
 *
 * The server runs as a child process with the node flags `npm start` and the Docker image give it
 * (--node-flags: 16 MiB semi-spaces), on an SQLite file in a temporary directory, with three
 * tenants with API keys and the rate limiter on with a limit the load never reaches, so that its
 * store is exercised. N
 * workers (default 8) drive it over HTTP:
 *
 * - up to three "big" workers, one per tenant, each grow one long-lived study (random, cmaes,
 *   prob-cmaes) to thousands of trials (--big-trials), reading it the ways a dashboard and a client
 *   do: trial pages with their tokens, one trial, /best, history with a stride, the distribution,
 *   model/grid and model/importance, export; at their size they go on reading it and churn too;
 * - the other workers churn: create a study of the next method (every method of GET /v1/methods in
 *   turn, with a categorical parameter where the method takes one), run it for a few generations
 *   (a heartbeat, now and then a failed trial, an intermediate value and the curves read back),
 *   read it every way above, list the tenant's studies page by page, read /v1/methods, /metrics and
 *   the dashboard's pages, then delete it; one study in eight is kept, to be checked at the end;
 * - between those, every fifth churned study has two objectives (a method of GET /v1/methods that
 *   searches several, in turn): its results report both values, and after each generation it is
 *   polled as the dashboard polls one, /best, the front page by page and the front's hypervolume
 *   history, and so is an earlier kept one of the tenant (unchanged: answered from the front cache);
 *   one in eight is kept too. Thousands of them pass the front cache's count bounds (16 studies a
 *   tenant, 64 in all: src/domain/studies/reports.ts) many times over.
 *
 * Every --interval seconds a sampler records the server's RSS (/proc/PID/status), its main
 * thread's heap (nodejs_heap_size_used_bytes from /metrics), the request rate and the latency per
 * route over the window (p50, p99, as the clients saw it), and prints them as a table. After
 * --minutes the load stops; the server idles for --idle seconds, then a full GC is forced
 * (bench/lib/soak-gc-hook.ts, preloaded with --expose-gc; SIGUSR2) and the heap after it is
 * compared with the heap after the GC forced before the load started.
 *
 * The idle phase (--idle-ms, default 60000; 0 skips it): the server runs with that CACHE_IDLE_MS
 * (src/domain/common/idle-sweep.ts), and after the end check the bench waits past it and one sweep
 * period, forces a GC again and reports the heap after idle: what a server whose traffic stopped
 * keeps for the months it may run on, against the empty server's.
 *
 * The end check: every observation answered 2xx on a kept study is read back (every trial page of
 * every kept study: present, COMPLETED, the same value), and each big study is exported twice (the
 * two documents identical, and holding every acknowledged observation with its value).
 *
 * --kill-at SECONDS: SIGKILL the server then, restart it on the same database and port; the
 * workers retry refused connections (and resend what was in flight: an identical observation is a
 * no-op) and carry on. The end check must still find everything acknowledged. Memory verdicts are
 * not given across a restart (two processes).
 *
 * Verdicts (exit 1 when one fails): no non-2xx answer other than 429 (retried after Retry-After),
 * nothing lost, exports identical; without --kill-at also RSS over the second half of the load
 * within 10 % (max / min), and the heap after the final GC at most HEAP_TOLERANCE above the heap
 * after the first, and the heap after idle at most HEAP_AFTER_IDLE × the empty server's.
 *
 *   npm run bench:soak -- [--minutes 20] [--workers 8] [--interval 10] [--idle 30] [--idle-ms 60000] [--kill-at S]
 *                         [--big-trials 5000] [--min-studies 2000] [--engine-workers N] [--node-flags '…']
 *                         [--heap-snapshots] [--out bench-results/published/<date>-soak]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { isDeepStrictEqual } from 'node:util';
import { freePort } from '../test/helpers/free-port.js';
import { processCpuSeconds, processMemory, waitReady } from '../test/helpers/server-process.js';
import { lcg, pct } from './lib/http-bench.js';
import { idleSweepPeriod } from '../src/domain/common/idle-sweep.js';
import { currentProvenance, writePublished } from './lib/provenance.js';

const { values: argv } = parseArgs({
  options: {
    minutes: { type: 'string', default: '20' },
    workers: { type: 'string', default: '8' },
    interval: { type: 'string', default: '10' },
    idle: { type: 'string', default: '30' },
    // The server's CACHE_IDLE_MS, and the idle phase after the end check (0: the server's default limit is not changed, no idle phase).
    'idle-ms': { type: 'string', default: '60000' },
    'kill-at': { type: 'string' },
    'big-trials': { type: 'string', default: '5000' },
    'min-studies': { type: 'string', default: '2000' },
    'engine-workers': { type: 'string' },
    'heap-snapshots': { type: 'boolean', default: false },
    // What `npm start` and the Docker image give the server (package.json, Dockerfile).
    'node-flags': { type: 'string', default: '--max-semi-space-size=16' },
    out: { type: 'string' },
  },
});

const MINUTES = Number(argv.minutes);
const WORKERS = Number(argv.workers);
const INTERVAL_S = Number(argv.interval);
const IDLE_S = Number(argv.idle);
const CACHE_IDLE_MS = Number(argv['idle-ms']);
const KILL_AT_S = argv['kill-at'] === undefined ? null : Number(argv['kill-at']);
const BIG_TRIALS = Number(argv['big-trials']);
/** Studies the run must create to pass every cache's count bound (the study cache holds 512); 0: no verdict. */
const MIN_STUDIES = Number(argv['min-studies']);
/** RSS over the second half of the load: max / min at most this. */
const RSS_FLAT = 1.1;
/**
 * Heap after the final GC over the heap after the GC before the load: at most this ratio (the
 * heap may at most double). The start is an empty server; after the load its caches are full by
 * count (512 studies, 64 model views per tenant, 10,000 measured times, …), and what they hold is
 * legitimately kept: by their byte bounds up to more than the empty server's heap (the model views
 * alone may hold 16 MiB per tenant), in practice a few tens of MiB
 * (docs/capacity.md, "Memory: every cache bounded"). A leak proportional to the traffic fails it:
 * the bound allows the empty heap once more, about 0.2 KiB per request over a 20-minute run's
 * 150,000 requests, a fifth of the RSS growth of 1 KiB per request seen in an earlier soak. The
 * printed summary gives the leak rate the run could detect.
 */
const HEAP_TOLERANCE = 2;
/**
 * Heap after the final GC over the heap after the GC half-way through the load: at most this. By
 * half-way every count bound has been passed (more than 2,000 studies), so the caches are full at
 * both points and anything the heap gained between them is growth, not filling.
 */
const HEAP_SECOND_HALF = 1.1;
/**
 * Heap after the idle phase (every study cache entry unused for CACHE_IDLE_MS, then a forced GC) over
 * the empty server's: at most this. What stays is what no idle limit applies to: the count-bounded
 * small maps (measured engine times, the metrics' method labels, rate-limit counters: a few MiB at
 * most, docs/capacity.md) and the code V8 compiled for the load.
 */
const HEAP_AFTER_IDLE = 1.25;
const ROOT = path.resolve(import.meta.dirname, '..');

const printed: string[] = [];
const log = (line: string) => {
  console.log(line);
  printed.push(line);
};

// ---------------------------------------------------------------- the server process

const TENANTS = ['soak-a', 'soak-b', 'soak-c'];
const KEYS = Object.fromEntries(TENANTS.map((t, i) => [t, `soak-key-${i}-${'0123456789abcdef'.repeat(2)}`])) as Record<string, string>;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-soak-'));
const dbPath = path.join(tmp, 'soak.db');
const gcReport = path.join(tmp, 'gc.jsonl');
const serverLog = path.join(tmp, 'server.log');

interface Running {
  child: ChildProcess;
  pid: number;
  exited: Promise<number | null>;
}

let port = 0;
let server: Running | null = null;
let base = '';

async function startServer(): Promise<Running> {
  if (port === 0) port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const logFd = fs.openSync(serverLog, 'a');
  const child = spawn(process.execPath, [...argv['node-flags']!.split(' ').filter(Boolean), '--expose-gc', '--import', 'tsx', '--import', './bench/lib/soak-gc-hook.ts', 'src/server.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      LOG_LEVEL: 'warn',
      LOG_PRETTY: 'false',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_PATH: dbPath,
      API_KEYS: TENANTS.map((t) => `${t}:${KEYS[t]}`).join(','),
      // On, so that its per-key store is part of what runs for months; far above this load.
      RATE_LIMIT_PER_MINUTE: '1000000',
      SOAK_GC_REPORT: gcReport,
      ...(CACHE_IDLE_MS > 0 ? { CACHE_IDLE_MS: String(CACHE_IDLE_MS) } : {}),
      ...(argv['heap-snapshots'] ? { SOAK_HEAP_SNAPSHOT_DIR: tmp } : {}),
      ...(argv['engine-workers'] ? { ENGINE_WORKERS: argv['engine-workers'] } : {}),
    },
    stdio: ['ignore', logFd, logFd],
  });
  fs.closeSync(logFd);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await waitReady(base, exited, { pid: child.pid! });
  return { child, pid: child.pid!, exited };
}

/** Forces a full GC in the server (soak-gc-hook.ts) and returns its figures after it. */
async function forcedGc(s: Running): Promise<{ heapUsed: number; rss: number; gcMs: number; external: number }> {
  const before = fs.existsSync(gcReport) ? fs.readFileSync(gcReport, 'utf8').split('\n').filter(Boolean).length : 0;
  s.child.kill('SIGUSR2');
  for (let i = 0; i < 600; i++) {
    await sleep(100);
    const lines = fs.existsSync(gcReport) ? fs.readFileSync(gcReport, 'utf8').split('\n').filter(Boolean) : [];
    if (lines.length > before) return JSON.parse(lines.at(-1)!);
  }
  throw new Error('the server did not report a forced GC within 60 s');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------- HTTP with retries and accounting

interface Answer {
  status: number;
  body: any;
}

/** Latencies of the current window, per route pattern (ms); and of the whole run. */
let windowLatency = new Map<string, number[]>();
const allLatency = new Map<string, number[]>();
const counters = { requests: 0, windowRequests: 0, refused429: 0, connectionErrors: 0, studiesCreated: 0, studiesDeleted: 0, observationsAcked: 0 };
/** Non-2xx answers other than 429, by route, status and code. */
const nonOk = new Map<string, number>();
let loadRunning = true;

function record(route: string, msTaken: number): void {
  for (const m of [windowLatency, allLatency]) {
    let xs = m.get(route);
    if (!xs) m.set(route, (xs = []));
    xs.push(msTaken);
  }
}

const isConnectionError = (err: unknown) => {
  const e = err as { name?: string; cause?: { code?: string; name?: string } };
  return e.name === 'TimeoutError' || e.name === 'TypeError' || ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET'].includes(e.cause?.code ?? '');
};

/**
 * One request as a client that survives restarts sends it: a refused or dropped connection is
 * retried (for up to 5 minutes; the request may have been applied, so only requests that are
 * safe to resend go through here unguarded: see the callers), a 429 is retried after its
 * Retry-After. `expected` statuses other than 2xx are not counted as failures (a delete resent
 * after a dropped connection may find the study gone).
 */
async function req(tenant: string, method: string, url: string, route: string, body?: unknown, expected: number[] = []): Promise<Answer> {
  const deadline = Date.now() + 300_000;
  let resent = false;
  for (;;) {
    const t0 = performance.now();
    let res: Response;
    try {
      res = await fetch(base + url, {
        method,
        headers: { authorization: `Bearer ${KEYS[tenant]}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(120_000),
      });
    } catch (err) {
      if (!isConnectionError(err) || Date.now() > deadline) throw err;
      counters.connectionErrors++;
      resent = true;
      await sleep(250);
      continue;
    }
    const text = await res.text();
    const took = performance.now() - t0;
    counters.requests++;
    counters.windowRequests++;
    if (res.status === 429) {
      counters.refused429++;
      await sleep(Math.min(5, Number(res.headers.get('retry-after') ?? 1)) * 1000);
      continue;
    }
    record(route, took);
    let parsed: any = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = text;
    }
    if ((res.status < 200 || res.status > 299) && !(resent && expected.includes(res.status))) {
      const key = `${method} ${route} ${res.status} ${parsed?.code ?? ''}`;
      nonOk.set(key, (nonOk.get(key) ?? 0) + 1);
    }
    return { status: res.status, body: parsed };
  }
}

// ---------------------------------------------------------------- the load

interface MethodInfo {
  name: string;
  has_model: boolean;
  search_distribution: boolean;
  min_batch_size: number;
  categorical: boolean;
  multi_objective: boolean;
}

/** Acknowledged observations on kept studies: `${studyId}/${trialId}` → value (the values, for two objectives). */
const acked = new Map<string, number | number[]>();
/** Kept studies and their tenant; the big ones also to be exported. */
const kept = new Map<string, { tenant: string; big: boolean }>();

const objective = (p: Record<string, unknown>, rnd: () => number) => {
  let s = 0;
  for (const v of Object.values(p)) s += typeof v === 'number' ? (Math.log1p(Math.abs(v)) - 1) ** 2 - 0.3 * Math.cos(3 * v) : v === 'b' ? -0.5 : 0.2;
  // A little noise: CMA-ES on a noiseless function converges and stops handing out points.
  return s + 0.01 * rnd();
};

function parameters(withCategorical: boolean, d = 2) {
  const ps: object[] = Array.from({ length: d }, (_, i) => ({ name: `x${i}`, bounds: [-5, 5] }));
  if (withCategorical) ps.push({ name: 'c', type: 'categorical', choices: ['a', 'b', 'c'] });
  return ps;
}

/** The second objective of the studies with two: it pulls towards x = 2 where the first pulls elsewhere, so the front has many points. */
const secondObjective = (p: Record<string, unknown>, rnd: () => number) => {
  let s = 0;
  for (const v of Object.values(p)) if (typeof v === 'number') s += (v - 2) ** 2;
  return s + 0.01 * rnd();
};

/**
 * One generation (or a batch): suggest, maybe heartbeat / fail / report an intermediate value, observe all the others
 * (`multi`: the two objectives' values).
 */
async function round(tenant: string, studyId: string, count: number, clientId: string, rnd: () => number, keep: boolean, extras: boolean, multi = false): Promise<'ok' | 'done'> {
  const s = await req(tenant, 'GET', `/v1/studies/${studyId}/suggestions?count=${count}&client_id=${clientId}`, 'GET suggestions');
  if (s.status !== 200) return 'done';
  const trials: { trial_id: number; parameters: Record<string, unknown> }[] = s.body.trials;
  if (trials.length === 0) return 'done';
  let reported = trials;
  if (extras && trials.length > 1) {
    const first = trials[0]!;
    await req(tenant, 'POST', `/v1/studies/${studyId}/trials/${first.trial_id}/heartbeat`, 'POST heartbeat', { client_id: clientId });
    const r = rnd();
    if (r < 0.3) {
      // One result reported step by step first (the early-stopping route), then its curve read back.
      await req(tenant, 'POST', `/v1/studies/${studyId}/trials/${first.trial_id}/intermediate`, 'POST intermediate', { step: 1, value: objective(first.parameters, rnd) });
      await req(tenant, 'GET', `/v1/studies/${studyId}/intermediate_values?page_size=100`, 'GET intermediate_values');
    } else if (r < 0.45) {
      await req(tenant, 'POST', `/v1/studies/${studyId}/trials/${first.trial_id}/fail`, 'POST fail', { reason: 'soak: a worker that crashed', client_id: clientId });
      reported = trials.slice(1);
    }
  }
  const observations = reported.map((t) => (multi ? { trial_id: t.trial_id, values: [objective(t.parameters, rnd), secondObjective(t.parameters, rnd)] } : { trial_id: t.trial_id, value: objective(t.parameters, rnd) }));
  if (observations.length === 0) return 'ok';
  const o = await req(tenant, 'POST', `/v1/studies/${studyId}/observations`, 'POST observations', { observations });
  if (o.status === 200) {
    counters.observationsAcked += observations.length;
    if (keep) for (const ob of observations) acked.set(`${studyId}/${ob.trial_id}`, ob.values ?? ob.value!);
  }
  return 'ok';
}

/** Reads of one study, every kind a client or the dashboard makes. */
async function readStudy(tenant: string, studyId: string, info: MethodInfo, rnd: () => number, heavyReads: boolean): Promise<void> {
  const id = studyId;
  await req(tenant, 'GET', `/v1/studies/${id}`, 'GET study');
  // Trial pages with their tokens (a few pages at most), sometimes filtered by state.
  let token: string | null = null;
  const filter = rnd() < 0.3 ? '&state=COMPLETED' : '';
  for (let page = 0; page < 3; page++) {
    const t: Answer = await req(tenant, 'GET', `/v1/studies/${id}/trials?page_size=200${filter}${token ? `&page_token=${encodeURIComponent(token)}` : ''}`, 'GET trials');
    if (t.status !== 200) break;
    if (page === 0 && t.body.trials.length > 0) await req(tenant, 'GET', `/v1/studies/${id}/trials/${t.body.trials[0].trial_id}`, 'GET trial');
    token = t.body.next_page_token;
    if (!token) break;
  }
  await req(tenant, 'GET', `/v1/studies/${id}/best`, 'GET best');
  const h = await req(tenant, 'GET', `/v1/studies/${id}/history?page_size=1000`, 'GET history');
  const count = h.body?.evaluation_count ?? 0;
  if (count > 1000) await req(tenant, 'GET', `/v1/studies/${id}/history?page_size=1000&stride=${Math.ceil(count / 1000)}`, 'GET history');
  if (info.search_distribution) await req(tenant, 'GET', `/v1/studies/${id}/distribution`, 'GET distribution');
  if (heavyReads && count >= 2) {
    await req(tenant, 'GET', `/v1/studies/${id}/model/grid?x=x0&y=x1&n=${20 + Math.floor(rnd() * 21)}`, 'GET model/grid');
    await req(tenant, 'GET', `/v1/studies/${id}/model/importance`, 'GET model/importance');
  }
  if (heavyReads) await req(tenant, 'GET', `/v1/studies/${id}/export`, 'GET export');
}

/** Everything not tied to one study: the tenant's study list page by page, the methods, /metrics, the dashboard. */
async function readService(tenant: string, rnd: () => number, someStudy: string | null): Promise<void> {
  let token: string | null = null;
  for (let page = 0; page < 5; page++) {
    const l: Answer = await req(tenant, 'GET', `/v1/studies?page_size=100${token ? `&page_token=${encodeURIComponent(token)}` : ''}`, 'GET studies');
    token = l.status === 200 ? l.body.next_page_token : null;
    if (!token) break;
  }
  if (rnd() < 0.3) await req(tenant, 'GET', '/v1/methods', 'GET methods');
  if (rnd() < 0.3) await req(tenant, 'GET', '/metrics', 'GET metrics');
  if (rnd() < 0.3) {
    await req(tenant, 'GET', '/ui/', 'GET ui');
    await req(tenant, 'GET', '/ui/compare', 'GET ui/compare');
    if (someStudy) await req(tenant, 'GET', `/ui/studies/${someStudy}`, 'GET ui/studies');
  }
}

let methodTurn = 0;
let loadT0 = 0;
let churnCount = 0;
let multiTurn = 0;
/** Every how many churned studies one has two objectives. */
const MULTI_EVERY = 5;
let churnCalls = 0;
/** Kept studies with two objectives, by tenant: what a dashboard comes back to. */
const keptMulti = new Map<string, string[]>();

/** The next churned study: one in MULTI_EVERY with two objectives, the others as churn() makes them. */
async function churnNext(tenant: string, methods: MethodInfo[], rnd: () => number, worker: number): Promise<void> {
  if (++churnCalls % MULTI_EVERY === 0) await churnMulti(tenant, methods, rnd, worker);
  else await churn(tenant, methods, rnd, worker);
}

/** What the dashboard polls of a study with several objectives: /best, the front page by page, its hypervolume history. */
async function pollFront(tenant: string, id: string): Promise<void> {
  await req(tenant, 'GET', `/v1/studies/${id}/best`, 'GET best');
  let token: string | null = null;
  for (let page = 0; page < 3; page++) {
    const f: Answer = await req(tenant, 'GET', `/v1/studies/${id}/front?page_size=20${token ? `&page_token=${encodeURIComponent(token)}` : ''}`, 'GET front');
    token = f.status === 200 ? f.body.next_page_token : null;
    if (!token) break;
  }
  token = null;
  for (let page = 0; page < 3; page++) {
    const h: Answer = await req(tenant, 'GET', `/v1/studies/${id}/front/history?page_size=100${token ? `&page_token=${encodeURIComponent(token)}` : ''}`, 'GET front/history');
    token = h.status === 200 ? h.body.next_page_token : null;
    if (!token) break;
  }
}

/** One churned study with two objectives: create, a few generations each followed by the dashboard's poll, a few reads, delete (or keep one in eight). */
async function churnMulti(tenant: string, methods: MethodInfo[], rnd: () => number, worker: number): Promise<void> {
  const multiMethods = methods.filter((m) => m.multi_objective);
  const info = multiMethods[multiTurn % multiMethods.length]!;
  const keep = multiTurn++ % 8 === 0;
  const c = await req(tenant, 'POST', '/v1/studies', 'POST studies', {
    name: `churn-multi-${worker}-${multiTurn}`,
    method: info.name,
    seed: 1 + Math.floor(rnd() * 1e6),
    parameters: parameters(false),
    objectives: [
      { name: 'error', direction: 'minimize' },
      { name: 'cost', direction: 'minimize' },
    ],
  });
  if (c.status !== 201) return;
  const { id, batch } = churned(c.body, tenant, keep);
  const rounds = 2 + Math.floor(rnd() * 3);
  for (let g = 0; g < rounds && loadRunning; g++) {
    if ((await round(tenant, id, batch, `w${worker}`, rnd, keep, false, true)) === 'done') break;
    await pollFront(tenant, id);
  }
  await req(tenant, 'GET', `/v1/studies/${id}/trials?page_size=200`, 'GET trials');
  if (rnd() < 0.2) await req(tenant, 'GET', `/v1/studies/${id}/model/grid?x=x0&y=x1&n=20&objective=cost`, 'GET model/grid');
  // The dashboard goes back to an earlier study of the tenant's, unchanged since.
  const earlier = keptMulti.get(tenant) ?? [];
  if (earlier.length > 0) await pollFront(tenant, earlier[Math.floor(rnd() * earlier.length)]!);
  if (keep) keptMulti.set(tenant, [...earlier.slice(-31), id]);
  else await deleteChurned(tenant, id);
}

/** A churned study just created: counted, and kept for the end check when `keep`. */
function churned(body: { id: string; batch_size: number }, tenant: string, keep: boolean): { id: string; batch: number } {
  counters.studiesCreated++;
  if (keep) kept.set(body.id, { tenant, big: false });
  return { id: body.id, batch: body.batch_size };
}

/** Deletes a churned study that is not kept (a 404, a study already gone, counts as deleted too). */
async function deleteChurned(tenant: string, id: string): Promise<void> {
  const d = await req(tenant, 'DELETE', `/v1/studies/${id}`, 'DELETE study', undefined, [404]);
  if (d.status === 204 || d.status === 200 || d.status === 404) counters.studiesDeleted++;
}

/** One churned study: create, a few generations, reads, delete (or keep one in eight). */
async function churn(tenant: string, methods: MethodInfo[], rnd: () => number, worker: number): Promise<void> {
  const info = methods[methodTurn++ % methods.length]!;
  const keep = churnCount++ % 8 === 0;
  const withCat = info.categorical && rnd() < 0.5;
  const c = await req(tenant, 'POST', '/v1/studies', 'POST studies', {
    name: `churn-${worker}-${churnCount}`,
    method: info.name,
    seed: 1 + Math.floor(rnd() * 1e6),
    parameters: parameters(withCat),
    ...(rnd() < 0.5 ? { metadata: { owner: `worker-${worker}`, note: 'x'.repeat(Math.floor(rnd() * 200)) } } : {}),
  });
  if (c.status !== 201) return;
  const { id, batch } = churned(c.body, tenant, keep);
  const rounds = 2 + Math.floor(rnd() * 3);
  for (let g = 0; g < rounds && loadRunning; g++) if ((await round(tenant, id, batch, `w${worker}`, rnd, keep, g === 0)) === 'done') break;
  await readStudy(tenant, id, info, rnd, rnd() < 0.2);
  if (rnd() < 0.25) await readService(tenant, rnd, id);
  if (!keep) {
    await deleteChurned(tenant, id);
  }
}

interface BigSpec {
  method: string;
  d: number;
  batch: number;
  count: number;
}
const BIG: BigSpec[] = [
  { method: 'random', d: 3, batch: 25, count: 25 },
  { method: 'cmaes', d: 4, batch: 20, count: 20 },
  { method: 'prob-cmaes', d: 2, batch: 16, count: 16 },
];

async function createBig(tenant: string, spec: BigSpec, n: number): Promise<string> {
  const c = await req(tenant, 'POST', '/v1/studies', 'POST studies', { name: `big-${spec.method}-${n}`, method: spec.method, batch_size: spec.batch, seed: 100 + n, parameters: parameters(false, spec.d) });
  if (c.status !== 201) throw new Error(`creating a big study: ${c.status} ${JSON.stringify(c.body)}`);
  counters.studiesCreated++;
  kept.set(c.body.id, { tenant, big: true });
  return c.body.id;
}

async function bigWorker(i: number, methods: MethodInfo[]): Promise<void> {
  const tenant = TENANTS[i % TENANTS.length]!;
  const spec = BIG[i]!;
  const info = methods.find((m) => m.name === spec.method)!;
  const rnd = lcg(1000 + i);
  let id = await createBig(tenant, spec, 0);
  let trials = 0;
  let n = 0;
  while (loadRunning) {
    // Grown at a steady pace, to --big-trials by 60 % of the load (churning meanwhile), as a study
    // that runs for the whole period grows, rather than all at once in the first minute.
    const due = BIG_TRIALS * Math.min(1, (performance.now() - loadT0) / (0.6 * MINUTES * 60_000));
    if (trials < due) {
      const r = await round(tenant, id, spec.count, `big${i}`, rnd, true, n % 10 === 0);
      if (r === 'done') {
        // Converged (no new point left): a new big study of the same kind takes over; the old one is kept and checked.
        id = await createBig(tenant, spec, ++n);
        trials = 0;
        continue;
      }
      trials += spec.count;
    } else {
      await churnNext(tenant, methods, rnd, i);
    }
    n++;
    if (n % 5 === 0) await readStudy(tenant, id, info, rnd, n % 25 === 0);
    if (n % 40 === 0) await readService(tenant, rnd, id);
  }
}

async function churnWorker(i: number, methods: MethodInfo[]): Promise<void> {
  const tenant = TENANTS[i % TENANTS.length]!;
  const rnd = lcg(2000 + i);
  while (loadRunning) await churnNext(tenant, methods, rnd, i);
}

// ---------------------------------------------------------------- sampling

interface Sample {
  t: number;
  pid: number;
  rssMiB: number;
  heapMiB: number | null;
  externalMiB: number | null;
  heapTotalMiB: number | null;
  v8PagesMiB: number | null;
  threads: number | null;
  reqPerS: number;
  requests: number;
  studiesCreated: number;
  studiesLive: number | null;
  routes: Record<string, { n: number; p50: number; p99: number }>;
  loadAvg: number;
  /** Seconds the main thread spent in garbage collection since the server started (prom-client's nodejs_gc_duration_seconds, all kinds). */
  gcS: number | null;
  /** CPU seconds of the whole server process (every thread) since it started, from /proc/PID/stat. */
  cpuS: number | null;
  /** RSS's parts: anonymous memory (every JavaScript heap, malloc's arenas, stacks), file pages, shared memory (SQLite's WAL index). */
  anonMiB: number;
  fileMiB: number;
  shmemMiB: number;
}

const samples: Sample[] = [];
const metricValue = (text: string, name: string): number | null => {
  let sum: number | null = null;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name} `) || line.startsWith(`${name}{`)) sum = (sum ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
};

async function sample(t0: number): Promise<Sample | null> {
  if (!server) return null;
  const mem = await processMemory(server.pid);
  let text = '';
  try {
    text = await (await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(30_000) })).text();
  } catch {
    // restarting
  }
  const routes: Sample['routes'] = {};
  for (const [r, xs] of windowLatency) routes[r] = { n: xs.length, p50: pct(xs, 50), p99: pct(xs, 99) };
  windowLatency = new Map();
  const s: Sample = {
    t: Math.round((performance.now() - t0) / 1000),
    pid: server.pid,
    rssMiB: mem?.rssMiB ?? NaN,
    heapMiB: mapNull(metricValue(text, 'probnes_nodejs_heap_size_used_bytes'), (b) => b / 2 ** 20),
    externalMiB: mapNull(metricValue(text, 'probnes_nodejs_external_memory_bytes'), (b) => b / 2 ** 20),
    heapTotalMiB: mapNull(metricValue(text, 'probnes_nodejs_heap_size_total_bytes'), (b) => b / 2 ** 20),
    threads: await threadCount(server.pid),
    v8PagesMiB: await v8Pages(server.pid),
    reqPerS: counters.windowRequests / INTERVAL_S,
    requests: counters.requests,
    studiesCreated: counters.studiesCreated,
    studiesLive: metricValue(text, 'probnes_studies'),
    routes,
    loadAvg: os.loadavg()[0]!,
    gcS: metricValue(text, 'probnes_nodejs_gc_duration_seconds_sum'),
    cpuS: await processCpuSeconds(server.pid),
    anonMiB: mem?.anonMiB ?? NaN,
    fileMiB: mem?.fileMiB ?? NaN,
    shmemMiB: mem?.shmemMiB ?? NaN,
  };
  counters.windowRequests = 0;
  samples.push(s);
  return s;
}

/** Threads of the server process (the event loop, the engine's worker threads, libuv's and V8's own). */
async function threadCount(pid: number): Promise<number | null> {
  try {
    return Number(/^Threads:\s+(\d+)/m.exec(await fs.promises.readFile(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
  } catch {
    return null;
  }
}

/**
 * Resident MiB in anonymous mappings of exactly 256 KiB: V8 maps its heap in pages of that size
 * (64-bit Node, no pointer compression), so this is the JavaScript heap of every thread together
 * (the event loop's, the engine's worker threads', the module loader's), against RSS.
 */
async function v8Pages(pid: number): Promise<number | null> {
  try {
    const text = await fs.promises.readFile(`/proc/${pid}/smaps`, 'utf8');
    let kib = 0;
    let page = false;
    for (const line of text.split('\n')) {
      const m = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(\S*)$/.exec(line);
      if (m) page = m[3] === '' && parseInt(m[2]!, 16) - parseInt(m[1]!, 16) === 262144;
      else if (page && line.startsWith('Rss:')) kib += Number(line.split(/\s+/)[1]);
    }
    return kib / 1024;
  } catch {
    return null;
  }
}

const mapNull = <T, U>(x: T | null, f: (v: T) => U): U | null => (x === null ? null : f(x));
const f1 = (x: number | null | undefined) => (x === null || x === undefined || Number.isNaN(x) ? '–' : x.toFixed(1));
const f0 = (x: number | null | undefined) => (x === null || x === undefined || Number.isNaN(x) ? '–' : x.toFixed(0));
const SERIES_ROUTES = ['GET suggestions', 'POST observations', 'POST studies', 'GET trials', 'GET model/grid', 'GET export'];
const seriesHeader = () => {
  log(`| t s | RSS MiB | anon / file / shmem MiB | V8 pages MiB | heap MiB | threads | req/s | GC % | CPU % | studies created | live | load | ${SERIES_ROUTES.map((r) => `${r} p50/p99 ms`).join(' | ')} |`);
  log(`|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|${SERIES_ROUTES.map(() => '---:').join('|')}|`);
};
/** The share of a window's wall time a cumulative counter grew by, in %, against the sample before it (same process only). */
const windowShare = (s: Sample, key: 'gcS' | 'cpuS'): number | null => {
  const i = samples.indexOf(s);
  const prev = i > 0 ? samples[i - 1]! : null;
  const a = prev?.[key];
  const b = s[key];
  if (!prev || prev.pid !== s.pid || a === null || a === undefined || b === null) return null;
  return (100 * (b - a)) / Math.max(1e-9, s.t - prev.t);
};
const seriesRow = (s: Sample) =>
  log(
    `| ${s.t} | ${f1(s.rssMiB)} | ${f0(s.anonMiB)} / ${f0(s.fileMiB)} / ${f0(s.shmemMiB)} | ${f1(s.v8PagesMiB)} | ${f1(s.heapMiB)} | ${f0(s.threads)} | ${f1(s.reqPerS)} | ${f1(windowShare(s, 'gcS'))} | ${f0(windowShare(s, 'cpuS'))} | ${s.studiesCreated} | ${f0(s.studiesLive)} | ${s.loadAvg.toFixed(1)} | ${SERIES_ROUTES.map((r) => (s.routes[r] ? `${f0(s.routes[r]!.p50)}/${f0(s.routes[r]!.p99)}` : '–')).join(' | ')} |`,
  );

// ---------------------------------------------------------------- the end check

async function endCheck(): Promise<{ lost: number; wrong: number; checked: number; missingStudies: number; exportsIdentical: boolean; exportLost: number }> {
  let lost = 0;
  let wrong = 0;
  let checked = 0;
  let missingStudies = 0;
  const byStudy = new Map<string, Map<number, number | number[]>>();
  for (const [k, v] of acked) {
    const [sid, tid] = k.split('/');
    let m = byStudy.get(sid!);
    if (!m) byStudy.set(sid!, (m = new Map()));
    m.set(Number(tid), v);
  }
  for (const [sid, { tenant }] of kept) {
    const expected = byStudy.get(sid) ?? new Map<number, number | number[]>();
    const seen = new Map<number, { state: string; value: number | null; values: number[] | null }>();
    let token: string | null = null;
    let status = 200;
    do {
      const page: Answer = await req(tenant, 'GET', `/v1/studies/${sid}/trials?page_size=1000${token ? `&page_token=${encodeURIComponent(token)}` : ''}`, 'GET trials (end check)');
      status = page.status;
      if (status !== 200) break;
      for (const t of page.body.trials) seen.set(t.trial_id, { state: t.state, value: t.value, values: t.values ?? null });
      token = page.body.next_page_token;
    } while (token);
    if (status !== 200) {
      missingStudies++;
      lost += expected.size;
      continue;
    }
    for (const [tid, value] of expected) {
      checked++;
      const t = seen.get(tid);
      if (!t || t.state !== 'COMPLETED') lost++;
      else if (typeof value === 'number' ? t.value !== value : !isDeepStrictEqual(t.values, value)) wrong++;
    }
  }
  // The big studies exported twice: identical documents, each holding every acknowledged value.
  let exportsIdentical = true;
  let exportLost = 0;
  for (const [sid, { tenant, big }] of kept) {
    if (!big) continue;
    const a = await req(tenant, 'GET', `/v1/studies/${sid}/export`, 'GET export (end check)');
    const b = await req(tenant, 'GET', `/v1/studies/${sid}/export`, 'GET export (end check)');
    // Identical but for the time of the export.
    const strip = (doc: any) => ({ ...doc, exported_at: null });
    if (a.status !== 200 || b.status !== 200 || !isDeepStrictEqual(strip(a.body), strip(b.body))) exportsIdentical = false;
    const values = new Map<number, unknown>((a.body?.trials ?? []).map((t: { trial_id: number; value: unknown; state: string }) => [t.trial_id, t.state === 'COMPLETED' ? t.value : undefined]));
    for (const [tid, v] of byStudy.get(sid) ?? []) if (values.get(tid) !== v) exportLost++;
  }
  return { lost, wrong, checked, missingStudies, exportsIdentical, exportLost };
}

// ---------------------------------------------------------------- the run

const provenance = currentProvenance(`npm run bench:soak -- ${process.argv.slice(2).join(' ')}`.trim());
const started = new Date();
const loadStart = os.loadavg();
log(`# bench:soak — ${MINUTES} min, ${WORKERS} workers${KILL_AT_S !== null ? `, SIGKILL at ${KILL_AT_S} s` : ''}`);
log('');
server = await startServer();
const firstPid = server.pid;
const methods: MethodInfo[] = (await req(TENANTS[0]!, 'GET', '/v1/methods', 'GET methods')).body.methods;
// Before any load: a forced GC, the reference for the heap at the end.
await sleep(2000);
const gcStart = await forcedGc(server);
log(`Server pid ${server.pid}; ${methods.length} methods (${methods.map((m) => m.name).join(', ')}); ${TENANTS.length} tenants; database ${dbPath}`);
log(`Before the load, after a forced GC: heap ${f1(gcStart.heapUsed / 2 ** 20)} MiB, RSS ${f1(gcStart.rss / 2 ** 20)} MiB`);
log('');
seriesHeader();

const t0 = performance.now();
loadT0 = t0;
const sampler = setInterval(() => {
  void sample(t0).then((s) => s && seriesRow(s));
}, INTERVAL_S * 1000);
let killedAt: number | null = null;
let restartMs: number | null = null;
const killer =
  KILL_AT_S === null
    ? null
    : setTimeout(() => {
        void (async () => {
          const s = server!;
          killedAt = Math.round((performance.now() - t0) / 1000);
          s.child.kill('SIGKILL');
          await s.exited;
          const r0 = performance.now();
          server = await startServer();
          restartMs = performance.now() - r0;
          log(`| ${Math.round((performance.now() - t0) / 1000)} | SIGKILL at ${killedAt} s; restarted (pid ${server.pid}) in ${(restartMs / 1000).toFixed(1)} s on the same database |`);
        })();
      }, KILL_AT_S * 1000);

const workerErrors: string[] = [];
const workers = Array.from({ length: WORKERS }, (_, i) =>
  (i < Math.min(BIG.length, WORKERS) ? bigWorker(i, methods) : churnWorker(i, methods)).catch((e: Error) => {
    workerErrors.push(`worker ${i}: ${e.message.slice(0, 200)}`);
  }),
);
// Half-way, a forced GC under load: with the caches warm, what the heap holds then against what it holds after the load.
await sleep((MINUTES * 60_000) / 2);
// (Not with --kill-at: the server may be restarting then, and no heap verdict is given across a restart.)
const gcMid = KILL_AT_S === null ? await forcedGc(server) : null;
if (gcMid) log(`| ${Math.round((performance.now() - t0) / 1000)} | forced GC under load (pid ${server.pid}): heap ${f1(gcMid.heapUsed / 2 ** 20)} MiB after it |`);
await sleep((MINUTES * 60_000) / 2);
loadRunning = false;
await Promise.all(workers);
if (killer) clearTimeout(killer);
const loadSeconds = (performance.now() - t0) / 1000;
clearInterval(sampler);
await sample(t0).then((s) => s && seriesRow(s));
const loadSamples = samples.slice();

// Idle, then a forced GC: what the server keeps once the load is gone.
log('');
log(`Load stopped after ${loadSeconds.toFixed(0)} s; idle ${IDLE_S} s, then a forced GC.`);
await sleep(IDLE_S * 1000);
const idleMem = await processMemory(server.pid);
const gcEnd = await forcedGc(server);
const afterGcMem = await processMemory(server.pid);

const check = await endCheck();

// Idle past the caches' limit and one sweep (the end check read no cached study data; the load's last use was before it), then a forced GC.
let gcIdle: Awaited<ReturnType<typeof forcedGc>> | null = null;
let idleGcMem: Awaited<ReturnType<typeof processMemory>> = null;
if (CACHE_IDLE_MS > 0) {
  const waitMs = CACHE_IDLE_MS + idleSweepPeriod(CACHE_IDLE_MS) + 5_000;
  log(`End check done; idle ${(waitMs / 1000).toFixed(0)} s (CACHE_IDLE_MS ${CACHE_IDLE_MS} and one sweep), then a forced GC.`);
  await sleep(waitMs);
  gcIdle = await forcedGc(server);
  idleGcMem = await processMemory(server.pid);
}

// ---------------------------------------------------------------- report

log('');
log('## Per route, whole run (latency as the clients saw it, 429 retries excluded)');
log('| route | n | p50 ms | p99 ms | max ms |');
log('|---|---:|---:|---:|---:|');
for (const [r, xs] of [...allLatency].sort((a, b) => a[0].localeCompare(b[0]))) log(`| ${r} | ${xs.length} | ${f1(pct(xs, 50))} | ${f1(pct(xs, 99))} | ${f1(Math.max(...xs))} |`);

const restarted = server.pid !== firstPid;
const afterLoad = loadSamples.filter((s) => s.pid === server!.pid);
const secondHalf = afterLoad.filter((s) => s.t >= loadSeconds / 2);
const rss = secondHalf.map((s) => s.rssMiB).filter((x) => Number.isFinite(x));
const rssRatio = rss.length ? Math.max(...rss) / Math.min(...rss) : NaN;
const heapRatio = gcEnd.heapUsed / gcStart.heapUsed;
const heapMidRatio = gcMid ? gcEnd.heapUsed / gcMid.heapUsed : null;
const heapIdleRatio = gcIdle ? gcIdle.heapUsed / gcStart.heapUsed : null;
/** The smallest leak per request the start-to-end bound would catch in this run (KiB). */
const detectableKiB = ((HEAP_TOLERANCE - 1) * gcStart.heapUsed) / 1024 / Math.max(1, counters.requests);
const nonOkTotal = [...nonOk.values()].reduce((a, b) => a + b, 0);

log('');
log('## Summary');
log(`Requests ${counters.requests} (${(counters.requests / loadSeconds).toFixed(1)}/s over the load), 429 answers retried ${counters.refused429}, connection errors retried ${counters.connectionErrors}, non-2xx (other than 429) ${nonOkTotal}${nonOkTotal ? `: ${[...nonOk].map(([k, n]) => `${k} ×${n}`).join('; ')}` : ''}`);
log(`Studies created ${counters.studiesCreated}, deleted ${counters.studiesDeleted}, kept ${kept.size} (${[...kept.values()].filter((k) => k.big).length} big); observations acknowledged ${counters.observationsAcked}, of them on kept studies ${acked.size}`);
log(`Big studies' trials (by study): ${(await bigSizes()).join(', ')}`);
if (restarted) log(`SIGKILL at ${killedAt} s, restart took ${f1((restartMs ?? NaN) / 1000)} s`);
log(`RSS: first sample ${f1(loadSamples[0]?.rssMiB)} MiB, peak ${f1(Math.max(...loadSamples.map((s) => s.rssMiB).filter(Number.isFinite)))} MiB, last under load ${f1(loadSamples.at(-1)?.rssMiB)} MiB; second half of the load${restarted ? ' (the restarted process, its warm-up included)' : ''} min ${f1(Math.min(...rss))}, max ${f1(Math.max(...rss))} MiB (max/min ${rssRatio.toFixed(3)})`);
{
  // What the collector costs: the main thread's GC time and the process's CPU time over the load (one process only).
  const first = afterLoad.find((x) => x.gcS !== null && x.cpuS !== null);
  const last = afterLoad.findLast((x) => x.gcS !== null && x.cpuS !== null);
  if (first && last && last !== first) {
    const gc = last.gcS! - first.gcS!;
    const cpu = last.cpuS! - first.cpuS!;
    const reqs = last.requests - first.requests;
    log(`GC and CPU from ${first.t} s to ${last.t} s: main thread's GC ${gc.toFixed(1)} s (${((100 * gc) / (last.t - first.t)).toFixed(1)} % of the wall time, ${((100 * gc) / cpu).toFixed(1)} % of the process's CPU), process CPU ${cpu.toFixed(1)} s for ${reqs} requests: ${((1000 * cpu) / Math.max(1, reqs)).toFixed(2)} CPU s and ${((1000 * gc) / Math.max(1, reqs)).toFixed(3)} GC s per 1,000 requests`);
  }
}
log(`RSS after ${IDLE_S} s idle ${f1(idleMem?.rssMiB)} MiB, after the forced GC ${f1(afterGcMem?.rssMiB)} MiB`);
log(`Heap (main thread) after a forced GC: before the load ${f1(gcStart.heapUsed / 2 ** 20)} MiB, half-way through it ${f1(gcMid ? gcMid.heapUsed / 2 ** 20 : null)} MiB, after it ${f1(gcEnd.heapUsed / 2 ** 20)} MiB (ratio ${heapRatio.toFixed(2)}${restarted ? ', of two different processes' : ''}); external ${f1(gcStart.external / 2 ** 20)} → ${f1(gcEnd.external / 2 ** 20)} MiB`);
log(`Heap after idle (${CACHE_IDLE_MS > 0 ? `CACHE_IDLE_MS ${CACHE_IDLE_MS} passed, a forced GC` : 'no idle phase: --idle-ms 0'}): ${f1(gcIdle ? gcIdle.heapUsed / 2 ** 20 : null)} MiB (${heapIdleRatio === null ? '–' : heapIdleRatio.toFixed(2)} × before the load; start / half-way / end / after idle ${f1(gcStart.heapUsed / 2 ** 20)} / ${f1(gcMid ? gcMid.heapUsed / 2 ** 20 : null)} / ${f1(gcEnd.heapUsed / 2 ** 20)} / ${f1(gcIdle ? gcIdle.heapUsed / 2 ** 20 : null)} MiB), RSS ${f1(idleGcMem?.rssMiB)} MiB`);
log(`End check: ${check.checked} acknowledged observations read back on ${kept.size} kept studies: ${check.lost} lost, ${check.wrong} with another value, ${check.missingStudies} studies missing; big studies exported twice: ${check.exportsIdentical ? 'identical' : 'DIFFERENT'}, ${check.exportLost} acknowledged observations missing or different in the export`);
if (workerErrors.length) log(`Worker errors: ${workerErrors.join('; ')}`);

const verdicts: [string, boolean | null][] = [
  ['no non-2xx answer (other than 429, retried)', nonOkTotal === 0],
  ['no worker failed', workerErrors.length === 0],
  ['every acknowledged observation present with its value', check.lost === 0 && check.wrong === 0 && check.missingStudies === 0],
  ['exports identical and complete', check.exportsIdentical && check.exportLost === 0],
  [`≥ ${MIN_STUDIES} studies created (${counters.studiesCreated})`, MIN_STUDIES > 0 ? counters.studiesCreated >= MIN_STUDIES : null],
  [`RSS flat over the second half: max/min ${rssRatio.toFixed(3)} ≤ ${RSS_FLAT}`, restarted ? null : rssRatio <= RSS_FLAT],
  [`heap after the final GC ≤ ${HEAP_TOLERANCE} × the heap after the first (${heapRatio.toFixed(2)}; catches a leak of ${detectableKiB.toFixed(2)} KiB per request or more)`, restarted ? null : heapRatio <= HEAP_TOLERANCE],
  [`heap after the final GC ≤ ${HEAP_SECOND_HALF} × the heap after the GC half-way (${heapMidRatio === null ? '–' : heapMidRatio.toFixed(2)})`, restarted || heapMidRatio === null ? null : heapMidRatio <= HEAP_SECOND_HALF],
  [`heap after idle ≤ ${HEAP_AFTER_IDLE} × the empty server's (${heapIdleRatio === null ? '–' : heapIdleRatio.toFixed(2)})`, restarted || heapIdleRatio === null ? null : heapIdleRatio <= HEAP_AFTER_IDLE],
];
log('');
log('## Verdicts');
for (const [what, ok] of verdicts) log(`- ${ok === null ? 'n/a' : ok ? 'PASS' : 'FAIL'}: ${what}`);

async function bigSizes(): Promise<string[]> {
  const out: string[] = [];
  for (const [sid, { tenant, big }] of kept) {
    if (!big) continue;
    const s = await req(tenant, 'GET', `/v1/studies/${sid}`, 'GET study');
    const c = s.body?.trial_counts ?? {};
    out.push(`${s.body?.method} ${Object.values(c as Record<string, number>).reduce((a, b) => a + b, 0)}`);
  }
  return out;
}

if (argv.out) {
  const files = writePublished(argv.out, {
    title: 'bench:soak',
    provenance,
    started,
    loadStart,
    printed,
    records: [
      ...samples.map((s) => ({ kind: 'sample', ...s })),
      { kind: 'gc', when: 'before the load', ...gcStart },
      ...(gcMid ? [{ kind: 'gc', when: 'half-way through the load', ...gcMid }] : []),
      { kind: 'gc', when: 'after the load and idle', ...gcEnd },
      ...(gcIdle ? [{ kind: 'gc', when: `after the end check and CACHE_IDLE_MS ${CACHE_IDLE_MS}`, ...gcIdle, rssMiB: idleGcMem?.rssMiB }] : []),
      { kind: 'end', counters, nonOk: Object.fromEntries(nonOk), check, idleRssMiB: idleMem?.rssMiB, afterGcRssMiB: afterGcMem?.rssMiB, killedAt, restartMs, routes: Object.fromEntries([...allLatency].map(([r, xs]) => [r, { n: xs.length, p50: pct(xs, 50), p99: pct(xs, 99), max: Math.max(...xs) }])) },
    ],
    loadDetail: `${os.availableParallelism()} cores`,
  });
  console.log(`wrote ${files.join(', ')}`);
}

server.child.kill('SIGTERM');
await server.exited;
if (!argv['heap-snapshots']) fs.rmSync(tmp, { recursive: true, force: true });
else console.log(`heap snapshots kept in ${tmp}`);
process.exit(verdicts.some(([, ok]) => ok === false) ? 1 : 0);
