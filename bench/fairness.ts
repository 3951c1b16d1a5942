/**
 * bench:fairness — one tenant's heavy engine work against another tenant's trivial loop.
 *
 * The real server (child process, ENGINE_WORKERS=1 by default: one heavy slot, plus the light lane)
 * runs two tenants with API keys:
 *
 * - "heavy": four prob-cmaes studies with 100 parameters and batch size 100, each driven by its own
 *   client (suggest 100, evaluate a cheap function, report 100, repeat), retrying 429 answers after
 *   their Retry-After as the project's clients do;
 * - "light": one CMA-ES study with 2 parameters driven by one client, one point at a time.
 *
 * For `--seconds` the light client's request latencies are recorded (suggestions and observations
 * separately); printed: their median, p95, p99 and max, the heavy tenant's generations, 429s and
 * Retry-After seconds, the server's engine figures from /metrics, and the load average. With
 * `--baseline` the same scenario runs first with the fair scheduler's limits opened up and no light
 * lane (ENGINE_LIGHT_MS=0, queue bounds and wait unlimited), so the two runs can be compared within
 * one invocation on the same (shared, loaded) machine; `--alone` first runs the light tenant with no
 * heavy studies at all, the floor that the machine's own load sets.
 *
 *   npm run bench:fairness -- [--seconds 90] [--alone] [--baseline] [--workers 1] [--out bench-results/published/<date>-fairness]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { parseArgs } from 'node:util';
import { startServer } from '../test/helpers/server-process.js';
import { fmt, ms, objective, params, pct } from './lib/http-bench.js';

const { values: argv } = parseArgs({
  options: { seconds: { type: 'string', default: '90' }, baseline: { type: 'boolean', default: false }, workers: { type: 'string', default: '1' }, out: { type: 'string' }, alone: { type: 'boolean', default: false } },
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

/** One heavy client: suggest 100, evaluate, observe, until `stop()`; 429s are waited out (Retry-After). */
async function heavyClient(base: string, studyId: string, running: () => boolean, fig: HeavyFigures): Promise<void> {
  const call = async (method: string, url: string, body?: unknown) => {
    for (;;) {
      const a = await request(base, HEAVY_KEY, method, url, body);
      if (a.status !== 429) return a;
      fig.refused++;
      fig.retryAfter.push(a.retryAfter ?? 1);
      if (!running()) return a;
      await new Promise((r) => setTimeout(r, (a.retryAfter ?? 1) * 1000));
    }
  };
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

/** The light tenant's loop: one point at a time; every request's latency recorded. */
async function lightClient(base: string, newStudy: () => Promise<string>, running: () => boolean, suggest: number[], observe: number[], errors: string[]): Promise<void> {
  let studyId = await newStudy();
  while (running()) {
    let t = process.hrtime.bigint();
    const s = await request(base, LIGHT_KEY, 'GET', `/v1/studies/${studyId}/suggestions?count=1&client_id=l`);
    suggest.push(ms(t));
    if (s.status !== 200) {
      errors.push(`suggestions ${s.status} ${s.body?.code}`);
      await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    const [trial] = s.body.trials;
    // CMA-ES converged on the 2-D function (the service answers 'converged' once its points repeat): restart.
    if (!trial) {
      studyId = await newStudy();
      continue;
    }
    t = process.hrtime.bigint();
    const o = await request(base, LIGHT_KEY, 'POST', `/v1/studies/${studyId}/observations`, { observations: [{ trial_id: trial.trial_id, value: objective(trial.parameters) }] });
    observe.push(ms(t));
    if (o.status !== 200) errors.push(`observations ${o.status} ${o.body?.code}`);
  }
}

const metric = (text: string, name: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith(name))
    .map((l) => l.trim())
    .join('; ');

async function scenario(label: string, extraEnv: Record<string, string>, heavyClients = 4): Promise<void> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-fairness-'));
  const server = await startServer(path.join(tmp, 'fair.db'), {
    env: { ENGINE_WORKERS: argv.workers!, RATE_LIMIT_PER_MINUTE: '0', API_KEYS: `heavy:${HEAVY_KEY},light:${LIGHT_KEY}`, ...extraEnv },
    stderr: 'inherit',
  });
  try {
    const heavyIds: string[] = [];
    for (let i = 0; i < heavyClients; i++) {
      const c = await request(server.base, HEAVY_KEY, 'POST', '/v1/studies', { name: `heavy-${i}`, method: 'prob-cmaes', batch_size: 100, seed: i + 1, parameters: params(100) });
      if (c.status !== 201) throw new Error(`create heavy: ${c.status} ${JSON.stringify(c.body)}`);
      heavyIds.push(c.body.id);
    }
    let seed = 9;
    const newLight = async () => {
      const light = await request(server.base, LIGHT_KEY, 'POST', '/v1/studies', { name: 'light', method: 'cmaes', batch_size: 4, seed: seed++, parameters: params(2) });
      if (light.status !== 201) throw new Error(`create light: ${light.status}`);
      return light.body.id as string;
    };
    const load0 = os.loadavg()[0]!;
    const end = Date.now() + SECONDS * 1000;
    const running = () => Date.now() < end;
    const fig: HeavyFigures = { generations: 0, refused: 0, retryAfter: [] };
    const suggest: number[] = [];
    const observe: number[] = [];
    const errors: string[] = [];
    // The heavy clients start first, so the light one begins while the engine is busy.
    // A heavy client's error ends only that client (the server stops under it at the end).
    const heavy = heavyIds.map((id) => heavyClient(server.base, id, running, fig).catch((e: Error) => errors.push(`heavy: ${e.message.slice(0, 80)}`)));
    await new Promise((r) => setTimeout(r, 1000));
    await lightClient(server.base, newLight, running, suggest, observe, errors);
    const text = await (await fetch(`${server.base}/metrics`, { headers: { authorization: `Bearer ${HEAVY_KEY}` } })).text();
    // The heavy clients' last calls may still be computing: the server is stopped under them.
    void heavy;
    runs.push({ scenario: label, seconds: SECONDS, workers: Number(argv.workers), suggestMs: suggest, observeMs: observe, heavyGenerations: fig.generations, heavyRefused: fig.refused, retryAfter: fig.retryAfter, loadAvg: [load0, os.loadavg()[0]] });
    const all = [...suggest, ...observe];
    log(`\n## ${label}`);
    log(`light tenant: ${suggest.length} suggestions, ${observe.length} observations in ${SECONDS} s, ${seed - 9} studies (a converged study is replaced) (after a 1 s head start of the heavy clients); errors: ${errors.length ? [...new Set(errors)].join(', ') : 'none'}`);
    log('| light requests | n | p50 ms | p95 ms | p99 ms | max ms |');
    log('|---|---:|---:|---:|---:|---:|');
    for (const [name, xs] of [['suggestions', suggest], ['observations', observe], ['all', all]] as const) {
      log(`| ${name} | ${xs.length} | ${fmt(pct(xs, 50))} | ${fmt(pct(xs, 95))} | ${fmt(pct(xs, 99))} | ${fmt(Math.max(...xs))} |`);
    }
    log(`heavy tenant: highest generation reached ${fig.generations} (4 studies, 100 points per generation); 429 answers ${fig.refused}, Retry-After median ${fig.retryAfter.length ? pct(fig.retryAfter, 50) : '-'} s`);
    log(`engine: ${metric(text, 'probnes_engine_compute_seconds_sum{method="prob-cmaes"')}`);
    log(`engine: ${metric(text, 'probnes_engine_compute_seconds_count{method="prob-cmaes"')}`);
    log(`rejected: ${metric(text, 'probnes_engine_rejected_total') || 'none'}`);
    log(`load average (1 min) ${load0.toFixed(1)} at start, ${os.loadavg()[0]!.toFixed(1)} at end, ${os.availableParallelism()} cores`);
  } finally {
    await server.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

log(`# bench:fairness — ENGINE_WORKERS=${argv.workers}, ${SECONDS} s per scenario`);
// The floor: the light tenant alone on this machine, as loaded as it is now.
if (argv.alone) await scenario('light tenant alone (no heavy studies): the machine\'s floor', {}, 0);
if (argv.baseline) await scenario('baseline: no light lane, queues unbounded (ENGINE_LIGHT_MS=0)', { ENGINE_LIGHT_MS: '0', ENGINE_QUEUE_PER_TENANT: '10000', ENGINE_QUEUE_PER_STUDY: '1000', ENGINE_QUEUE_MAX_WAIT_MS: '3600000' });
await scenario('fair scheduler, default limits', {});
if (argv.out) {
  fs.mkdirSync(argv.out, { recursive: true });
  fs.writeFileSync(path.join(argv.out, 'results.md'), printed.join('\n') + '\n');
  fs.writeFileSync(path.join(argv.out, 'runs.jsonl.gz'), zlib.gzipSync(runs.map((r) => JSON.stringify(r)).join('\n') + '\n'));
}
