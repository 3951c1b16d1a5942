/**
 * More workers than the batch. W workers that ask the server for W points at once (one request,
 * `count=W`) on a study whose batch_size is the method's default get generation_size points of the
 * generation and W − generation_size extras drawn from the same distribution, so the distribution
 * moves once per W evaluations. Three ways to run W workers, at a fixed budget of evaluations:
 *
 *   extras   default batch_size, count = W            (every worker busy, few updates)
 *   matched  batch_size = max(W, the method's minimum), count = W   (every worker busy)
 *   one-gen  default batch_size, count = generation_size   (one generation per request: W − 3 workers idle)
 *
 * on COCO's BBOB functions (src/engine/benchmarks/bbob.ts: random x_opt and f_opt per instance,
 * domain [−5, 5]^d), instance k with study seed k. The loop runs in process over HTTP (app.inject,
 * in-memory SQLite, engine inline): per round one suggestions request, all points evaluated, one
 * observations request. Printed: final regret f_best − f_opt, median [min, max] over instances,
 * and the rounds (requests) the budget took, i.e. the wall time in units of one evaluation.
 *
 * Run: npm run bench:workers -- [--methods cmaes,prob-cmaes] [--functions 1,2,8,10] [--dim 5]
 *        [--workers 4,16,64] [--instances 3] [--budget 250] [--modes extras,matched,one-gen]
 */
import { loadavg } from 'node:os';
import { buildApp } from '../src/app.js';
import { getBenchmark, getStrategy, type MethodName } from '../src/engine/index.js';
import { SqliteStorage } from '../src/storage/index.js';
import { currentProvenance } from './lib/provenance.js';

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
const BUDGET = Number(arg('budget', '250'));
const MODES = list('modes', 'extras,matched,one-gen') as Mode[];
const DEFAULT_BATCH = 3;

type Mode = 'extras' | 'matched' | 'one-gen';

interface Run {
  regret: number;
  rounds: number;
}

async function run(method: MethodName, fn: number, instance: number, workers: number, mode: Mode): Promise<Run> {
  const problem = getBenchmark(`bbob-f${fn}`, D, instance);
  const storage = SqliteStorage.open(':memory:');
  const app = await buildApp({ config: { bodyLimit: 1 << 20, requestTimeoutMs: 0, rateLimitPerMinute: 0 }, storage });
  try {
    const batch = mode === 'matched' ? Math.max(workers, getStrategy(method).minBatch) : DEFAULT_BATCH;
    const body = {
      name: `${problem.name}-${D}d`,
      method,
      seed: instance,
      batch_size: batch,
      parameters: Array.from({ length: D }, (_, i) => ({ name: `x${i}`, bounds: [problem.bounds.lower[i]!, problem.bounds.upper[i]!] })),
    };
    const created = await app.inject({ method: 'POST', url: '/v1/studies', payload: body });
    if (created.statusCode !== 201) throw new Error(created.body);
    const id = created.json().id as string;
    let used = 0;
    let rounds = 0;
    let best = Infinity;
    let generationSize = batch;
    while (used < BUDGET) {
      const want = mode === 'one-gen' ? generationSize : workers;
      const count = Math.min(want, BUDGET - used);
      const got = (await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=${count}` })).json();
      generationSize = got.generation_size;
      const obs = got.trials.map((t: { trial_id: number; parameters: Record<string, number> }) => {
        const value = problem.f(Array.from({ length: D }, (_, i) => t.parameters[`x${i}`]!));
        best = Math.min(best, value);
        return { trial_id: t.trial_id, value };
      });
      used += obs.length;
      rounds++;
      const res = await app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: obs } });
      if (res.statusCode !== 200) throw new Error(res.body);
    }
    return { regret: Math.max(0, best - problem.optimum), rounds };
  } finally {
    await app.close();
    await storage.close();
  }
}

const fmt = (v: number) => v.toExponential(1);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function cell(runs: Run[]): string {
  const r = runs.map((x) => x.regret).sort((a, b) => a - b);
  return `${fmt(median(r))} [${fmt(r[0]!)}, ${fmt(r[r.length - 1]!)}] · ${median(runs.map((x) => x.rounds))} rounds`;
}

async function main(): Promise<void> {
  const started = Date.now();
  const prov = currentProvenance(`npm run bench:workers -- ${process.argv.slice(2).join(' ')}`.trim());
  console.log(`BBOB f${FUNCTIONS.join(', f')}, d = ${D}, budget ${BUDGET} evaluations, instances 1–${INSTANCES} (study seed = instance).`);
  console.log(`Cells: final regret f_best − f_opt, median [min, max] over instances · rounds (requests) used.`);
  console.log(`Commit ${prov.commit ?? '?'}${prov.dirty ? ' (with uncommitted changes)' : ''}; command: ${prov.command}`);
  console.log('');
  console.log(`| method | f | W | ${MODES.join(' | ')} |`);
  console.log(`|---|---|---|${MODES.map(() => '---|').join('')}`);
  for (const method of METHODS) {
    for (const fn of FUNCTIONS) {
      for (const w of WORKERS) {
        const cells: string[] = [];
        for (const mode of MODES) {
          const runs: Run[] = [];
          for (let k = 1; k <= INSTANCES; k++) runs.push(await run(method, fn, k, w, mode));
          cells.push(cell(runs));
        }
        console.log(`| ${method} | f${fn} | ${w} | ${cells.join(' | ')} |`);
      }
    }
  }
  console.log('');
  console.log(`Wall time ${((Date.now() - started) / 1000).toFixed(0)} s; load average at the end (1, 5, 15 min): ${loadavg().map((l) => l.toFixed(1)).join(', ')}.`);
}

await main();
