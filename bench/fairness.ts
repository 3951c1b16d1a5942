/**
 * bench:fairness — one tenant's heavy engine work against another tenant's trivial loop.
 *
 * The real server (child process, ENGINE_WORKERS=1 by default: one heavy slot, plus the light lane)
 * runs two tenants with API keys:
 *
 * - "heavy": four prob-cmaes studies with 100 parameters and batch size 100, each driven by its own
 *   client (suggest 100, evaluate a cheap function, report 100, repeat), retrying 429 answers after
 *   their Retry-After as the project's clients do;
 * - "light": two loops of one point at a time, each on a 2-parameter study: a CMA-ES one (a method
 *   without a model: the light lane) and a prob-cmaes one (the default method: GP-based, so its calls
 *   are heavy and share the heavy lane with other tenants' work). Each study declares max_trials 150
 *   and a new one replaces it when it completes or converges, so its calls keep a steady cost.
 *
 * With `--views` a further scenario gives the heavy tenant, instead of optimisation loops, the load
 * of model views (GET …/model/importance and …/model/grid): two 100-parameter studies with 300
 * trials, a prob-cmaes one (two generations and 100 external results, fixed during the run) and a
 * CMA-ES one whose generation a driver client keeps advancing (20 points per generation, about one
 * a second, on the light lane), so views of its latest generation miss the cache (their GP is fitted for the view: 300
 * points in 100 dimensions); `--view-clients` clients (default 4) each loop over importance and
 * grids of both studies with random x, y and n (cache misses) and over repeated identical requests
 * (cache hits), waiting out a 429's Retry-After. Printed besides
 * the light loops' latencies: per view kind its answers (200, 429, other), latencies and throughput.
 * It runs twice: first with the driver alone and no view client (the control: what the other
 * tenant's loop on the viewed study costs the light tenant), then with the view clients.
 * `--views-only` skips the scenario of heavy optimisation loops.
 *
 * For `--seconds` the light clients' request latencies are recorded (per loop, suggestions and
 * observations separately); printed: their median, p95, p99 and max, the heavy tenant's generations, 429s and
 * Retry-After seconds, the server's engine figures from /metrics, and the load average. With
 * `--baseline` the same scenario runs first with the fair scheduler's limits opened up and no light
 * lane (ENGINE_LIGHT_MS=0, queue bounds and wait unlimited), so the two runs can be compared within
 * one invocation on the same (shared, loaded) machine; `--alone` first runs the light tenant with no
 * heavy studies at all, the floor that the machine's own load sets.
 *
 *   npm run bench:fairness -- [--seconds 90] [--alone] [--baseline] [--views] [--views-only] [--view-clients 4] [--workers 1] [--out bench-results/published/<date>-fairness]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startServer } from '../test/helpers/server-process.js';
import { fmt, lcg, ms, objective, params, pct } from './lib/http-bench.js';
import { currentProvenance, writePublished } from './lib/provenance.js';

const { values: argv } = parseArgs({
  options: {
    seconds: { type: 'string', default: '90' },
    baseline: { type: 'boolean', default: false },
    workers: { type: 'string', default: '1' },
    out: { type: 'string' },
    alone: { type: 'boolean', default: false },
    views: { type: 'boolean', default: false },
    'views-only': { type: 'boolean', default: false },
    'view-clients': { type: 'string', default: '4' },
  },
});
/** What is printed, kept for --out's results.md; the raw latencies for its runs.jsonl.gz. */
const printed: string[] = [];
const runs: object[] = [];
const log = (line: string) => {
  console.log(line);
  printed.push(line);
};
const SECONDS = Number(argv.seconds);
const HEAVY_KEY = 'heavy-tenant-key-0123456789abcdef';
const LIGHT_KEY = 'light-tenant-key-0123456789abcdef';

interface Answer {
  status: number;
  body: any;
  retryAfter: number | null;
}

async function request(base: string, key: string, method: string, url: string, body?: unknown): Promise<Answer> {
  const res = await fetch(base + url, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  const ra = res.headers.get('retry-after');
  return { status: res.status, body: text ? JSON.parse(text) : null, retryAfter: ra === null ? null : Number(ra) };
}

interface HeavyFigures {
  generations: number;
  refused: number;
  retryAfter: number[];
}

/** A request whose 429 answers are waited out (Retry-After) while the run lasts, counted in `fig`. */
async function retrying(base: string, key: string, running: () => boolean, fig: { refused: number; retryAfter: number[] }, method: string, url: string, body?: unknown): Promise<Answer> {
  for (;;) {
    const a = await request(base, key, method, url, body);
    if (a.status !== 429) return a;
    fig.refused++;
    fig.retryAfter.push(a.retryAfter ?? 1);
    if (!running()) return a;
    await new Promise((r) => setTimeout(r, (a.retryAfter ?? 1) * 1000));
  }
}

/** One heavy client: suggest 100, evaluate, observe, until `stop()`; 429s are waited out (Retry-After). */
async function heavyClient(base: string, studyId: string, running: () => boolean, fig: HeavyFigures): Promise<void> {
  const call = (method: string, url: string, body?: unknown) => retrying(base, HEAVY_KEY, running, fig, method, url, body);
  while (running()) {
    const s = await call('GET', `/v1/studies/${studyId}/suggestions?count=100&client_id=h`);
    if (s.status !== 200) {
      if (running()) throw new Error(`heavy suggestions: ${s.status} ${JSON.stringify(s.body)}`);
      return;
    }
    const observations = s.body.trials.map((t: { trial_id: number; parameters: Record<string, number> }) => ({ trial_id: t.trial_id, value: objective(t.parameters) }));
    const o = await call('POST', `/v1/studies/${studyId}/observations`, { observations });
    if (o.status !== 200) throw new Error(`heavy observations: ${o.status} ${JSON.stringify(o.body)}`);
    fig.generations = Math.max(fig.generations, o.body.generation);
  }
}

/** Suggest `count`, evaluate, observe `rounds` times (429s waited out): builds a study's trials. */
async function drive(base: string, studyId: string, count: number, rounds: number, running: () => boolean, fig: HeavyFigures): Promise<void> {
  for (let r = 0; r < rounds && running(); r++) {
    const s = await retrying(base, HEAVY_KEY, running, fig, 'GET', `/v1/studies/${studyId}/suggestions?count=${count}&client_id=d`);
    if (s.status !== 200) throw new Error(`drive suggestions: ${s.status} ${JSON.stringify(s.body)}`);
    const observations = s.body.trials.map((t: { trial_id: number; parameters: Record<string, number> }) => ({ trial_id: t.trial_id, value: objective(t.parameters) }));
    const o = await retrying(base, HEAVY_KEY, running, fig, 'POST', `/v1/studies/${studyId}/observations`, { observations });
    if (o.status !== 200) throw new Error(`drive observations: ${o.status} ${JSON.stringify(o.body)}`);
    fig.generations = Math.max(fig.generations, o.body.generation);
  }
}

interface LoopFigures {
  method: 'cmaes' | 'prob-cmaes';
  suggest: number[];
  observe: number[];
  studies: number;
  errors: string[];
}

/**
 * One of the light tenant's loops: one point at a time, every request's latency recorded. A study
 * that completed (max_trials 150) or converged (no point left to hand out) is replaced by a new one.
 */
async function lightClient(base: string, fig: LoopFigures, seed: () => number, running: () => boolean): Promise<void> {
  const newStudy = async () => {
    const c = await request(base, LIGHT_KEY, 'POST', '/v1/studies', { name: `light-${fig.method}`, method: fig.method, batch_size: fig.method === 'cmaes' ? 4 : 3, max_trials: 150, seed: seed(), parameters: params(2) });
    if (c.status !== 201) throw new Error(`create light: ${c.status} ${JSON.stringify(c.body)}`);
    fig.studies++;
    return c.body.id as string;
  };
  let studyId = await newStudy();
  while (running()) {
    let t = process.hrtime.bigint();
    const s = await request(base, LIGHT_KEY, 'GET', `/v1/studies/${studyId}/suggestions?count=1&client_id=l`);
    fig.suggest.push(ms(t));
    if (s.status !== 200) {
      fig.errors.push(`suggestions ${s.status} ${s.body?.code}`);
      await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    const [trial] = s.body.trials;
    if (!trial) {
      studyId = await newStudy();
      continue;
    }
    t = process.hrtime.bigint();
    const o = await request(base, LIGHT_KEY, 'POST', `/v1/studies/${studyId}/observations`, { observations: [{ trial_id: trial.trial_id, value: objective(trial.parameters) }] });
    fig.observe.push(ms(t));
    if (o.status !== 200) fig.errors.push(`observations ${o.status} ${o.body?.code}`);
  }
}

/** The kinds of view request the view clients make, each with its own figures. */
const VIEW_KINDS = [
  'importance, CMA-ES study, latest generation (a GP fitted per generation)',
  'grid, CMA-ES study, latest generation, random x, y, n',
  'grid, prob-cmaes study, random x, y, n',
  'importance, prob-cmaes study (one repeated query)',
  'grid, prob-cmaes study, one repeated query',
] as const;

interface ViewFigures {
  codes: Record<string, number>;
  ms: number[];
}

/**
 * One view client: picks a kind of view request at random (seeded) and asks it, until the run
 * ends; a 429 is waited out (Retry-After), as the project's clients do. Latencies of 200 answers.
 */
async function viewClient(base: string, ids: { probnes: string; cmaes: string }, seed: number, running: () => boolean, figs: ViewFigures[]): Promise<void> {
  const rnd = lcg(seed);
  const pick = (k: number) => Math.floor(rnd() * k);
  const axes = () => {
    const x = pick(100);
    const y = (x + 1 + pick(99)) % 100;
    return `x=x${x}&y=x${y}&n=${10 + pick(51)}`;
  };
  while (running()) {
    const kind = pick(VIEW_KINDS.length);
    const url = [
      () => `/v1/studies/${ids.cmaes}/model/importance`,
      () => `/v1/studies/${ids.cmaes}/model/grid?${axes()}`,
      () => `/v1/studies/${ids.probnes}/model/grid?${axes()}`,
      () => `/v1/studies/${ids.probnes}/model/importance`,
      () => `/v1/studies/${ids.probnes}/model/grid?x=x0&y=x1`,
    ][kind]!();
    const t = process.hrtime.bigint();
    const a = await request(base, HEAVY_KEY, 'GET', url);
    const took = ms(t);
    const fig = figs[kind]!;
    fig.codes[a.status] = (fig.codes[a.status] ?? 0) + 1;
    if (a.status === 200) fig.ms.push(took);
    else if (a.status === 429) await new Promise((r) => setTimeout(r, (a.retryAfter ?? 1) * 1000));
    else await new Promise((r) => setTimeout(r, 100));
  }
}

const metric = (text: string, name: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith(name))
    .map((l) => l.trim())
    .join('; ');

const loadavg = () => os.loadavg().map((x) => x.toFixed(2)).join(', ');

async function scenario(label: string, extraEnv: Record<string, string>, load: { loops: number; views: boolean; viewClients?: number }): Promise<void> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-fairness-'));
  const server = await startServer(path.join(tmp, 'fair.db'), {
    env: { ENGINE_WORKERS: argv.workers!, RATE_LIMIT_PER_MINUTE: '0', API_KEYS: `heavy:${HEAVY_KEY},light:${LIGHT_KEY}`, ...extraEnv },
    stderr: 'inherit',
  });
  try {
    const heavyIds: string[] = [];
    for (let i = 0; i < load.loops; i++) {
      const c = await request(server.base, HEAVY_KEY, 'POST', '/v1/studies', { name: `heavy-${i}`, method: 'prob-cmaes', batch_size: 100, seed: i + 1, parameters: params(100) });
      if (c.status !== 201) throw new Error(`create heavy: ${c.status} ${JSON.stringify(c.body)}`);
      heavyIds.push(c.body.id);
    }
    const fig: HeavyFigures = { generations: 0, refused: 0, retryAfter: [] };
    let views: { probnes: string; cmaes: string } | null = null;
    let setupSeconds = 0;
    if (load.views) {
      // The viewed studies, built before the run: 100 parameters, at least 300 trials each.
      const t0 = Date.now();
      const always = () => true;
      const p = await request(server.base, HEAVY_KEY, 'POST', '/v1/studies', { name: 'viewed-prob-cmaes', method: 'prob-cmaes', batch_size: 100, seed: 101, parameters: params(100) });
      const c = await request(server.base, HEAVY_KEY, 'POST', '/v1/studies', { name: 'viewed-cmaes', method: 'cmaes', batch_size: 20, seed: 102, parameters: params(100) });
      if (p.status !== 201 || c.status !== 201) throw new Error(`create viewed: ${p.status} ${c.status}`);
      const none = () => ({ generations: 0, refused: 0, retryAfter: [] });
      // prob-cmaes: two generations of 100 from the loop, then 100 results evaluated elsewhere
      // (external observations): 300 trials without the update that a third generation would
      // make due (a GP fit in 100 dimensions that takes minutes on a loaded 2-core machine).
      const rnd = lcg(7);
      const external = Array.from({ length: 100 }, () => {
        const parameters = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`x${i}`, -2 + 4 * rnd()]));
        return { parameters, value: objective(parameters) };
      });
      await Promise.all([
        drive(server.base, p.body.id, 100, 2, always, none()).then(async () => {
          const o = await request(server.base, HEAVY_KEY, 'POST', `/v1/studies/${p.body.id}/observations`, { observations: external });
          if (o.status !== 200) throw new Error(`external observations: ${o.status} ${JSON.stringify(o.body)}`);
        }),
        drive(server.base, c.body.id, 20, 15, always, none()),
      ]);
      views = { probnes: p.body.id, cmaes: c.body.id };
      setupSeconds = (Date.now() - t0) / 1000;
    }
    let seed = 9;
    const nextSeed = () => seed++;
    const load0 = loadavg();
    const end = Date.now() + SECONDS * 1000;
    const running = () => Date.now() < end;
    const loops: LoopFigures[] = (['cmaes', 'prob-cmaes'] as const).map((method) => ({ method, suggest: [], observe: [], studies: 0, errors: [] }));
    const viewFigs: ViewFigures[] = VIEW_KINDS.map(() => ({ codes: {}, ms: [] }));
    const errors: string[] = [];
    // The heavy clients start first, so the light ones begin while the engine is busy.
    // A heavy client's error ends only that client (the server stops under it at the end).
    const heavy = heavyIds.map((id) => heavyClient(server.base, id, running, fig).catch((e: Error) => errors.push(`heavy: ${e.message.slice(0, 80)}`)));
    if (views) {
      // The CMA-ES study's generation keeps changing (20 points a generation, about one a second:
      // every view of it, seconds long, finds a new one), so its views miss the cache; the view
      // clients ask away.
      const v = views;
      heavy.push(
        (async () => {
          while (running()) {
            await drive(server.base, v.cmaes, 20, 1, running, { generations: 0, refused: 0, retryAfter: [] });
            await new Promise((r) => setTimeout(r, 1000));
          }
        })().catch((e: Error) => errors.push(`driver: ${e.message.slice(0, 80)}`)),
      );
      for (let k = 0; k < (load.viewClients ?? 0); k++) heavy.push(viewClient(server.base, v, 1000 + k, running, viewFigs).catch((e: Error) => errors.push(`views: ${e.message.slice(0, 80)}`)));
    }
    if (heavy.length > 0) await new Promise((r) => setTimeout(r, 1000));
    await Promise.all(loops.map((f) => lightClient(server.base, f, nextSeed, running)));
    const load1 = loadavg();
    const text = await (await fetch(`${server.base}/metrics`, { headers: { authorization: `Bearer ${HEAVY_KEY}` } })).text();
    // The heavy clients' last calls may still be computing: the server is stopped under them.
    void heavy;
    runs.push({
      scenario: label,
      seconds: SECONDS,
      workers: Number(argv.workers),
      light: loops.map((f) => ({ method: f.method, suggestMs: f.suggest, observeMs: f.observe, studies: f.studies, errors: f.errors })),
      heavyLoops: load.loops,
      heavyGenerations: fig.generations,
      heavyRefused: fig.refused,
      retryAfter: fig.retryAfter,
      viewClients: load.viewClients ?? 0,
      views: views ? VIEW_KINDS.map((kind, i) => ({ kind, codes: viewFigs[i]!.codes, ms: viewFigs[i]!.ms })) : null,
      viewSetupSeconds: setupSeconds,
      loadAvg: { start: load0, end: load1 },
    });
    log(`\n## ${label}`);
    log(`light tenant: two loops for ${SECONDS} s${heavy.length ? ' (after a 1 s head start of the other tenant)' : ''}; studies: ${loops.map((f) => `${f.method} ${f.studies}`).join(', ')} (a completed or converged study is replaced); errors: ${[...loops.flatMap((f) => f.errors), ...errors].length ? [...new Set([...loops.flatMap((f) => f.errors.map((e) => `${f.method} ${e}`)), ...errors])].join(', ') : 'none'}`);
    log('| light requests | n | p50 ms | p95 ms | p99 ms | max ms |');
    log('|---|---:|---:|---:|---:|---:|');
    for (const f of loops) {
      for (const [name, xs] of [['suggestions', f.suggest], ['observations', f.observe], ['both', [...f.suggest, ...f.observe]]] as const) {
        log(`| ${f.method} ${name} | ${xs.length} | ${fmt(pct(xs, 50))} | ${fmt(pct(xs, 95))} | ${fmt(pct(xs, 99))} | ${fmt(Math.max(...xs))} |`);
      }
    }
    if (load.loops > 0) log(`heavy tenant: highest generation reached ${fig.generations} (${load.loops} prob-cmaes studies, 100 parameters, 100 points per generation); 429 answers ${fig.refused}, Retry-After median ${fig.retryAfter.length ? pct(fig.retryAfter, 50) : '-'} s`);
    if (views && (load.viewClients ?? 0) === 0) log(`no view client; the CMA-ES study (100 parameters, 300 trials at the start) advanced a generation of 20 about every second, as in the scenario with views; setup ${setupSeconds.toFixed(0)} s`);
    if (views && (load.viewClients ?? 0) > 0) {
      log(`model views: ${load.viewClients ?? 0} clients of the other tenant on a prob-cmaes study (100 parameters, 300 trials: two generations of 100 and 100 external results; fixed during the run) and a CMA-ES study (100 parameters, 300 trials at the start, a new generation of 20 about every second); built in ${setupSeconds.toFixed(0)} s before the run`);
      log('| view requests | n | 200 | 429 | other | 200 per s | p50 ms | p95 ms | p99 ms | max ms (200 answers) |');
      log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
      VIEW_KINDS.forEach((kind, i) => {
        const v = viewFigs[i]!;
        const n = Object.values(v.codes).reduce((a, b) => a + b, 0);
        const other = n - (v.codes[200] ?? 0) - (v.codes[429] ?? 0);
        log(`| ${kind} | ${n} | ${v.codes[200] ?? 0} | ${v.codes[429] ?? 0} | ${other}${other ? ` (${Object.keys(v.codes).filter((c) => c !== '200' && c !== '429').join(', ')})` : ''} | ${((v.codes[200] ?? 0) / SECONDS).toFixed(2)} | ${fmt(pct(v.ms, 50))} | ${fmt(pct(v.ms, 95))} | ${fmt(pct(v.ms, 99))} | ${v.ms.length ? fmt(Math.max(...v.ms)) : '-'} |`);
      });
    }
    log(`engine: ${metric(text, 'probnes_engine_compute_seconds_sum{method="prob-cmaes"')}`);
    log(`engine: ${metric(text, 'probnes_engine_compute_seconds_count{method="prob-cmaes"')}`);
    log(`rejected: ${metric(text, 'probnes_engine_rejected_total') || 'none'}`);
    log(`load average (1, 5, 15 min) ${load0} at start, ${load1} at end; ${os.availableParallelism()} cores`);
  } finally {
    await server.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

const started = new Date();
const loadStart = os.loadavg();
const provenance = currentProvenance(`npm run bench:fairness -- ${process.argv.slice(2).join(' ')}`);
log(`ENGINE_WORKERS=${argv.workers}, ${SECONDS} s per scenario`);
// The floor: the light tenant alone on this machine, as loaded as it is now.
if (argv.alone) await scenario('light tenant alone (no other tenant): the machine\'s floor', {}, { loops: 0, views: false });
if (argv.baseline) await scenario('baseline: no light lane, queues unbounded (ENGINE_LIGHT_MS=0)', { ENGINE_LIGHT_MS: '0', ENGINE_QUEUE_PER_TENANT: '10000', ENGINE_QUEUE_PER_STUDY: '1000', ENGINE_QUEUE_MAX_WAIT_MS: '3600000' }, { loops: 4, views: false });
if (!argv['views-only']) await scenario('fair scheduler, default limits: four heavy optimisation loops', {}, { loops: 4, views: false });
if (argv.views || argv['views-only']) {
  await scenario('fair scheduler, default limits: the viewed studies\' driver alone, no view client (the control)', {}, { loops: 0, views: true, viewClients: 0 });
  await scenario(`fair scheduler, default limits: the driver and ${argv['view-clients']} model-view clients`, {}, { loops: 0, views: true, viewClients: Number(argv['view-clients']) });
}
if (argv.out) writePublished(argv.out, { title: 'bench:fairness', provenance, started, loadStart, printed, records: runs });
