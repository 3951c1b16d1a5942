/**
 * More workers than the batch. W workers that ask the server for W points at once (one request,
 * `count=W`) on a study whose batch_size is the method's default get generation_size points of the
 * generation and W − generation_size extras drawn from the same distribution, so the distribution
 * moves once per W evaluations. Ways to run W workers, at a fixed budget of evaluations:
 *
 *   extras         default batch_size (3), count = W        (every worker busy, few updates)
 *   matched        batch_size = max(W, the method's minimum), count = W   (every worker busy)
 *   one-gen        default batch_size, count = generation_size   (one generation per request: W − 3 workers idle)
 *   async-default  W asynchronous workers as the clients' optimize() runs them: each asks one point
 *                  (its own client_id), evaluates it in a random 1–8 ms, reports it, asks again;
 *                  default batch_size
 *   async-matched  the same with batch_size = W;  async-double: batch_size = 2W (at most 100)
 *
 * on COCO's BBOB functions (src/engine/benchmarks/bbob.ts: random x_opt and f_opt per instance,
 * domain [−5, 5]^d), instance k with study seed k. The loop runs in process over HTTP (app.inject,
 * in-memory SQLite, engine inline). Printed: final regret f_best − f_opt, median [min, max] over
 * instances; for the synchronous modes the rounds (requests) the budget took, i.e. the wall time in
 * units of one evaluation; and the share of evaluations the server counted as extras (`extras` in
 * the suggestions answers).
 *
 * Run: npm run bench:workers -- [--methods cmaes,prob-cmaes] [--functions 1,2,8,10] [--dim 5]
 *        [--workers 4,16,64] [--instances 3] [--budget 250] [--modes extras,matched,one-gen,async-default,async-matched,async-double]
 *        [--out DIR]
 *
 * BBOB's protocol and a declared budget (docs/parallel-workers.md, the ProbNES start phase): --prior-std 2 gives
 * every parameter the prior N(0, 2²) of bench:bbob (default: the server's default prior for bounds), --budget
 * takes a list (one run per budget), --max-trials declares each run's budget as the study's max_trials, and a
 * last table gives the share of BBOB's 11 targets reached at the budget (bench/lib/bbob-score.ts) over every
 * function and instance, per method, W, mode and budget.
 *
 * --out DIR: DIR/results.md gets the printed table (with the command, the commit and the load) and
 * DIR/runs.jsonl.gz one line per run (method, function, instance, W, mode, batch_size, final regret,
 * rounds, extras, evaluations, provenance), so every cell recomputes (median, min, max over instances).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { buildApp } from '../src/app.js';
import { getBenchmark, getStrategy, type MethodName } from '../src/engine/index.js';
import { SqliteStorage } from '../src/storage/index.js';
import { currentProvenance, describeProvenance } from './lib/provenance.js';
import { targetsReached, TARGETS, trajectoryOf } from './lib/bbob-score.js';

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : def;
}
const list = (name: string, def: string) => arg(name, def).split(',');

const METHODS = list('methods', 'cmaes,prob-cmaes') as MethodName[];
const FUNCTIONS = list('functions', '1,2,8,10').map(Number);
const D = Number(arg('dim', '5'));
const WORKERS = list('workers', '4,16,64').map(Number);
const INSTANCES = Number(arg('instances', '3'));
const BUDGETS = list('budget', '250').map(Number);
const MAX_TRIALS = process.argv.includes('--max-trials');
const PRIOR_STD = process.argv.includes('--prior-std') ? Number(arg('prior-std', '2')) : null;
/** --options '{"k":v}': method options for every study (e.g. '{"start_phase":"off"}'). */
const OPTIONS = JSON.parse(arg('options', '{}')) as Record<string, unknown>;
const MODES = list('modes', 'extras,matched,one-gen') as Mode[];
const DEFAULT_BATCH = 3;
/** The server's largest batch_size. */
const MAX_BATCH = 100;

type Mode = 'extras' | 'matched' | 'one-gen' | 'async-default' | 'async-matched' | 'async-double';

interface Run {
  regret: number;
  /** The values in the order they were reported (what BBOB's targets are scored on). */
  values: number[];
  /** Requests for points (synchronous modes: one per round of W evaluations). */
  rounds: number;
  /** Points the suggestions answers counted as extras (their `extras.count`). */
  extras: number;
  evaluations: number;
}

interface Loop {
  problem: ReturnType<typeof getBenchmark>;
  inject: (opts: { method: 'GET' | 'POST'; url: string; payload?: object }) => Promise<{ statusCode: number; body: string; json: () => any }>;
  id: string;
  run: Run;
  best: number;
}

function batchFor(method: MethodName, workers: number, mode: Mode): number {
  const min = getStrategy(method).minBatch;
  if (mode === 'matched' || mode === 'async-matched') return Math.max(workers, min);
  if (mode === 'async-double') return Math.min(MAX_BATCH, Math.max(2 * workers, min));
  return DEFAULT_BATCH;
}

/** One suggestions request, its points evaluated, one observations request. */
async function round(loop: Loop, count: number, clientId: string, delayMs: () => number): Promise<number> {
  const got = (await loop.inject({ method: 'GET', url: `/v1/studies/${loop.id}/suggestions?count=${count}&client_id=${clientId}` })).json();
  loop.run.rounds++;
  loop.run.extras += got.extras?.count ?? 0;
  const observations = got.trials.map((t: { trial_id: number; parameters: Record<string, number> }) => {
    const value = loop.problem.f(Array.from({ length: D }, (_, i) => t.parameters[`x${i}`]!));
    loop.best = Math.min(loop.best, value);
    loop.run.values.push(value);
    return { trial_id: t.trial_id, value };
  });
  const wait = delayMs();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  loop.run.evaluations += observations.length;
  const res = await loop.inject({ method: 'POST', url: `/v1/studies/${loop.id}/observations`, payload: { observations } });
  if (res.statusCode !== 200) throw new Error(res.body);
  return got.generation_size;
}

/** xorshift32: the asynchronous workers' evaluation times, the same sequence for every run of a seed. */
function delays(seed: number): () => number {
  let x = seed * 2654435761 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return 1 + ((x >>> 0) % 8);
  };
}

async function run(method: MethodName, fn: number, instance: number, workers: number, mode: Mode, BUDGET: number): Promise<Run> {
  const problem = getBenchmark(`bbob-f${fn}`, D, instance);
  const storage = SqliteStorage.open(':memory:');
  const app = await buildApp({ config: { bodyLimit: 1 << 20, requestTimeoutMs: 0, rateLimitPerMinute: 0 }, storage });
  try {
    const body = {
      name: `${problem.name}-${D}d`,
      method,
      seed: instance,
      batch_size: batchFor(method, workers, mode),
      parameters: Array.from({ length: D }, (_, i) => ({
        name: `x${i}`, bounds: [problem.bounds.lower[i]!, problem.bounds.upper[i]!],
        ...(PRIOR_STD === null ? {} : { prior: { mean: (problem.bounds.lower[i]! + problem.bounds.upper[i]!) / 2, std: PRIOR_STD } }),
      })),
      ...(MAX_TRIALS ? { max_trials: BUDGET } : {}),
      ...(Object.keys(OPTIONS).length ? { options: OPTIONS } : {}),
    };
    const created = await app.inject({ method: 'POST', url: '/v1/studies', payload: body });
    if (created.statusCode !== 201) throw new Error(created.body);
    const loop: Loop = { problem, inject: (o) => app.inject(o), id: created.json().id, run: { regret: 0, values: [], rounds: 0, extras: 0, evaluations: 0 }, best: Infinity };
    if (mode.startsWith('async')) {
      // W workers, each: one point, a random evaluation time of 1–8 ms, its result; like optimize().
      let reserved = 0;
      const worker = async (w: number) => {
        const delay = delays(instance * 1000 + w);
        while (reserved < BUDGET) {
          reserved++;
          await round(loop, 1, `w${w}`, delay);
        }
      };
      await Promise.all(Array.from({ length: workers }, (_, w) => worker(w)));
    } else {
      let generationSize = body.batch_size;
      while (loop.run.evaluations < BUDGET) {
        const want = mode === 'one-gen' ? generationSize : workers;
        generationSize = await round(loop, Math.min(want, BUDGET - loop.run.evaluations), 'farm', () => 0);
      }
    }
    return { ...loop.run, regret: Math.max(0, loop.best - problem.optimum) };
  } finally {
    await app.close();
    await storage.close();
  }
}

const fmt = (v: number) => v.toExponential(1);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function cell(runs: Run[]): string {
  const r = runs.map((x) => x.regret).sort((a, b) => a - b);
  const extras = runs.reduce((a, x) => a + x.extras, 0) / runs.reduce((a, x) => a + x.evaluations, 0);
  const rounds = runs[0]!.rounds === runs[0]!.evaluations ? '' : ` · ${median(runs.map((x) => x.rounds))} rounds`;
  return `${fmt(median(r))} [${fmt(r[0]!)}, ${fmt(r[r.length - 1]!)}]${rounds} · ${(100 * extras).toFixed(0)}% extras`;
}

async function main(): Promise<void> {
  const started = Date.now();
  const prov = currentProvenance(`npm run bench:workers -- ${process.argv.slice(2).join(' ')}`.trim());
  const printed: string[] = [];
  const emit = (line: string) => {
    printed.push(line);
    console.log(line);
  };
  const records: Record<string, unknown>[] = [];
  const loads: number[] = [];
  const fmtLoad = (l: number[]) => l.map((x) => x.toFixed(1)).join(', ');
  const loadStart = loadavg();
  emit(`BBOB f${FUNCTIONS.join(', f')}, d = ${D}, budget ${BUDGETS.join(', ')} evaluations${MAX_TRIALS ? ' (declared as max_trials)' : ''}, instances 1–${INSTANCES} (study seed = instance)${PRIOR_STD === null ? '' : `, prior N(0, ${PRIOR_STD}²) per parameter`}.`);
  emit(`Cells: final regret f_best − f_opt, median [min, max] over instances · rounds (requests) used · share of evaluations handed out as extras.`);
  emit(`Command: \`${prov.command}\``);
  emit(describeProvenance([prov]));
  emit('');
  emit(`| method | f | W | budget | ${MODES.join(' | ')} |`);
  emit(`|---|---|---|---|${MODES.map(() => '---|').join('')}`);
  // Targets reached at the budget per (method, W, mode, budget), over every function and instance.
  const targets = new Map<string, { reached: number; runs: number }>();
  for (const method of METHODS) {
    for (const fn of FUNCTIONS) {
      for (const w of WORKERS) {
        for (const budget of BUDGETS) {
          const cells: string[] = [];
          for (const mode of MODES) {
            const runs: Run[] = [];
            for (let k = 1; k <= INSTANCES; k++) {
              const load1 = loadavg()[0]!;
              loads.push(load1);
              const r = await run(method, fn, k, w, mode, budget);
              const reached = targetsReached(trajectoryOf(r.values, getBenchmark(`bbob-f${fn}`, D, k).optimum), budget);
              const key = `${method} | ${w} | ${mode} | ${budget}`;
              const t = targets.get(key) ?? { reached: 0, runs: 0 };
              targets.set(key, { reached: t.reached + reached, runs: t.runs + 1 });
              records.push({ method, function: `bbob-f${fn}`, dim: D, instance: k, workers: w, mode, batch_size: batchFor(method, w, mode), budget, max_trials: MAX_TRIALS ? budget : null, prior_std: PRIOR_STD, targets_reached: reached, ...r, load1, provenance: prov });
              runs.push(r);
            }
            cells.push(cell(runs));
          }
          emit(`| ${method} | f${fn} | ${w} | ${budget} | ${cells.join(' | ')} |`);
        }
      }
    }
  }
  emit('');
  emit(`Share of BBOB's ${TARGETS.length} targets reached at the budget, over f${FUNCTIONS.join(', f')} × instances 1–${INSTANCES}:`);
  emit('');
  emit('| method | W | mode | budget | targets |');
  emit('|---|---|---|---|---|');
  for (const [key, t] of targets) emit(`| ${key} | ${((100 * t.reached) / (t.runs * TARGETS.length)).toFixed(1)}% |`);
  emit('');
  emit(`Wall time ${((Date.now() - started) / 1000).toFixed(0)} s; load average (1, 5, 15 min) at the start ${fmtLoad(loadStart)}, at the end ${fmtLoad(loadavg())}; 1-minute load before each run ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}.`);
  const out = arg('out', '');
  if (out) {
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'results.md'), `# bench:workers\n\n${printed.join('\n')}\n`);
    writeFileSync(join(out, 'runs.jsonl.gz'), gzipSync(Buffer.from(`${records.map((r) => JSON.stringify(r)).join('\n')}\n`), { level: 9 }));
    console.log(`written: ${join(out, 'results.md')}, ${join(out, 'runs.jsonl.gz')} (${records.length} runs)`);
  }
}

await main();
