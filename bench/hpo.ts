/**
 * bench:hpo — tuning real scikit-learn models through the HTTP API, against Optuna's samplers.
 *
 *   npm run bench:hpo -- [--tasks model-choice,boosting] [--seeds 10] [--budgets 20,50,100]
 *                        [--methods prob-cmaes,optuna-tpe,optuna-cmaes,optuna-random] [--lanes 2]
 *                        [--max-minutes M] [--out DIR] [--report-from DIR] [--reuse DIR --reuse-methods m,…]
 *
 * Tasks (bench/peers/hpo_sklearn.py; data shipped with scikit-learn; objective 1 − 3-fold CV accuracy,
 * deterministic): `model-choice`, a conditional space (classifier ∈ {svc, random_forest, logistic},
 * each with its own parameters, SVC's gamma only for its rbf kernel); `boosting`, gradient boosting with
 * stepped parameters. The service's methods (`prob-cmaes`, `bo`, `random`, `cmaes`, …) run through the
 * HTTP API of a server process started here (one study per run, seeded; batch size 3 for the ProbNES
 * methods, CMA-ES's default λ for cmaes, 1 otherwise), the evaluations done by long-lived Python
 * evaluators (one per lane, so scikit-learn is imported once; nothing is cached). The peers
 * (`optuna-tpe`: TPESampler(multivariate, group), `optuna-cmaes`: CmaEsSampler with a random independent
 * sampler, `optuna-random`: RandomSampler; all seeded) run in the same evaluator with Optuna's own
 * define-by-run spaces. One run of the largest budget per (task, seed, method), scored at every budget
 * by the best value among its first b evaluations (bench/lib/hpo-score.ts).
 *
 * Runs go seed by seed, `--lanes` at a time. With `--max-minutes M` no seed is started after M minutes
 * (the started ones finish), and only seeds every method completed are scored. The runs and the tables
 * go to DIR/runs.jsonl.gz and DIR/results.md (bench/lib/provenance.ts); `--report-from DIR` rebuilds the
 * tables from DIR's runs. `--reuse DIR --reuse-methods m,…` does not run those methods but takes their
 * runs (same tasks, seeds and largest budget) from DIR's, each with its own provenance: for a change
 * that can only move the other methods (the peers' code, Optuna's, did not change).
 */
import { appendFileSync, existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { getStrategy, methodFacts, type MethodName } from '../src/engine/index.js';
import { bestAt, completeSeeds, mean, meanRanks, median, type HpoRun } from './lib/hpo-score.js';
import { currentProvenance, writePublished } from './lib/provenance.js';
import { PythonHelper } from './lib/python-helper.js';
import { startBenchServer } from './lib/server-child.js';

interface Args {
  tasks: string[];
  seeds: number;
  budgets: number[];
  methods: string[];
  lanes: number;
  maxMinutes: number;
  out: string;
  reportFrom: string | null;
  /** Methods whose runs are read from a published directory instead of run (`--reuse`). */
  reuse: { dir: string; methods: string[] } | null;
}

function parseArgs(argv: string[]): Args {
  const get = (k: string, d: string) => {
    const i = argv.indexOf(`--${k}`);
    return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1]! : d;
  };
  const budgets = get('budgets', '20,50,100').split(',').map(Number).sort((a, b) => a - b);
  return {
    tasks: get('tasks', 'model-choice,boosting').split(','),
    seeds: Number(get('seeds', '10')),
    budgets,
    methods: get('methods', 'prob-cmaes,optuna-tpe,optuna-cmaes,optuna-random').split(','),
    lanes: Number(get('lanes', '2')),
    maxMinutes: Number(get('max-minutes', 'Infinity')),
    out: get('out', `bench-results/hpo/${new Date().toISOString().slice(0, 10)}`),
    reportFrom: argv.includes('--report-from') ? get('report-from', '') : null,
    reuse: argv.includes('--reuse') ? { dir: get('reuse', ''), methods: get('reuse-methods', '').split(',').filter(Boolean) } : null,
  };
}

type Param = Record<string, unknown>;
/** The tasks' spaces as declared to the server (the same as hpo_sklearn.py's define-by-run spaces). */
export const SPACES: Record<string, Param[]> = {
  'model-choice': [
    { name: 'classifier', type: 'categorical', choices: ['svc', 'random_forest', 'logistic'] },
    { name: 'svc_kernel', type: 'categorical', choices: ['rbf', 'linear'], condition: { parent: 'classifier', values: ['svc'] } },
    { name: 'svc_C', scale: 'log', bounds: [1e-3, 1e3], condition: { parent: 'classifier', values: ['svc'] } },
    { name: 'svc_gamma', scale: 'log', bounds: [1e-5, 10], condition: { parent: 'svc_kernel', values: ['rbf'] } },
    { name: 'rf_n_estimators', type: 'int', bounds: [10, 50], step: 10, condition: { parent: 'classifier', values: ['random_forest'] } },
    { name: 'rf_max_depth', type: 'int', bounds: [2, 12], condition: { parent: 'classifier', values: ['random_forest'] } },
    { name: 'lr_C', scale: 'log', bounds: [1e-4, 100], condition: { parent: 'classifier', values: ['logistic'] } },
  ],
  boosting: [
    { name: 'learning_rate', scale: 'log', bounds: [0.01, 1] },
    { name: 'n_estimators', type: 'int', bounds: [10, 50], step: 10 },
    { name: 'max_depth', type: 'int', bounds: [1, 3] },
    { name: 'subsample', bounds: [0.5, 1], step: 0.1 },
  ],
};

/** Batch size: CMA-ES's default λ = 4 + ⌊3 ln D⌋ (it ranks a generation), 3 for the ProbNES methods, else 1. */
const batchOf = (method: MethodName, D: number) => (getStrategy(method).minBatch > 1 ? 4 + Math.floor(3 * Math.log(D)) : methodFacts(method).family === 'probnes' ? 3 : 1);

/** A long-lived hpo_sklearn.py process: one request at a time. */
class Evaluator extends PythonHelper {
  constructor() {
    super('bench/peers/hpo_sklearn.py');
  }
}

interface Record_ extends HpoRun {
  budget: number;
  parameters: Param[];
  seconds: number;
  evalSeconds: number | null;
  batch: number | null;
}

async function http(base: string, method: string, path: string, body?: object): Promise<Record<string, unknown>> {
  const res = await fetch(`${base}${path}`, { method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** One run of a service method: a seeded study through the HTTP API, every trial evaluated by `ev`. */
async function runService(base: string, ev: Evaluator, task: string, method: MethodName, seed: number, budget: number): Promise<Omit<Record_, 'task' | 'seed' | 'method' | 'budget'>> {
  const t0 = performance.now();
  const batch = batchOf(method, SPACES[task]!.length);
  const study = await http(base, 'POST', '/v1/studies', { name: `${task}-${method}-${seed}`, parameters: SPACES[task], method, batch_size: batch, seed });
  const id = String(study.id);
  const values: number[] = [], parameters: Param[] = [];
  let evalSeconds = 0;
  while (values.length < budget) {
    const s = await http(base, 'GET', `/v1/studies/${id}/suggestions?count=${Math.min(batch, budget - values.length)}&client_id=bench`);
    const trials = s.trials as { trial_id: number; parameters: Param }[];
    if (trials.length === 0) throw new Error(`${method}: no suggestion (${JSON.stringify(s)})`);
    const observations = [];
    for (const t of trials) {
      const r = await ev.request({ eval: { task, params: t.parameters } });
      evalSeconds += r.seconds as number;
      values.push(r.y as number);
      parameters.push(t.parameters);
      observations.push({ trial_id: t.trial_id, value: r.y as number });
    }
    await http(base, 'POST', `/v1/studies/${id}/observations`, { observations });
  }
  return { values: values.slice(0, budget), parameters: parameters.slice(0, budget), seconds: (performance.now() - t0) / 1000, evalSeconds, batch };
}

async function runAll(args: Args, partial: string): Promise<{ records: Record_[]; versions: Record<string, unknown> }> {
  const budget = args.budgets[args.budgets.length - 1]!;
  const reused = new Set(args.reuse?.methods ?? []);
  const jobs = Array.from({ length: args.seeds }, (_, seed) => args.tasks.flatMap((task) => args.methods.filter((m) => !reused.has(m)).map((method) => ({ task, seed, method })))).flat();
  const server = await startBenchServer('probnes-hpo-');
  const evaluators = Array.from({ length: args.lanes }, () => new Evaluator());
  const versions = await evaluators[0]!.ready;
  await Promise.all(evaluators.map((e) => e.ready));
  // Reused runs keep the provenance they were published with (writePublished keeps a record's own).
  const records: Record_[] = args.reuse
    ? (readRuns(args.reuse.dir) as Record_[]).filter((r) => reused.has(r.method) && args.tasks.includes(r.task) && r.seed < args.seeds && r.budget === budget)
    : [];
  for (const m of reused) if (!records.some((r) => r.method === m)) throw new Error(`--reuse ${args.reuse!.dir} has no run of ${m} at budget ${budget}`);
  const deadline = Date.now() + args.maxMinutes * 60_000;
  let lastSeed = -1;
  let next = 0;
  try {
    await Promise.all(evaluators.map(async (ev) => {
      for (;;) {
        const job = jobs[next];
        if (!job) return;
        // After the deadline only the seeds already started go on.
        if (job.seed > lastSeed && Date.now() > deadline) return;
        next++;
        lastSeed = Math.max(lastSeed, job.seed);
        const t0 = performance.now();
        let run: Omit<Record_, 'task' | 'seed' | 'method' | 'budget'>;
        if (job.method.startsWith('optuna-')) {
          const r = await ev.request({ optuna: { task: job.task, sampler: job.method.slice('optuna-'.length), seed: job.seed, budget } });
          run = { values: r.values as number[], parameters: r.parameters as Param[], seconds: (performance.now() - t0) / 1000, evalSeconds: null, batch: null };
        } else {
          run = await runService(server.base, ev, job.task, job.method as MethodName, job.seed, budget);
        }
        const rec: Record_ = { task: job.task, seed: job.seed, method: job.method, budget, ...run };
        records.push(rec);
        appendFileSync(partial, `${JSON.stringify(rec)}\n`);
        console.log(`${job.task} seed ${job.seed} ${job.method}: best ${fmt(bestAt(run.values, budget))} (${run.seconds.toFixed(1)} s)`);
      }
    }));
  } finally {
    evaluators.forEach((e) => e.close());
    server.stop();
  }
  return { records, versions };
}

const fmt = (x: number) => (Number.isFinite(x) ? x.toFixed(4) : '–');

/** The tables of results.md. */
export function report(args: Pick<Args, 'tasks' | 'budgets' | 'methods'>, runs: readonly HpoRun[]): string[] {
  const { tasks, budgets, methods } = args;
  const lines: string[] = [];
  const seedsOf = (task: string) => completeSeeds(runs, task, methods, budgets[budgets.length - 1]!);
  lines.push(`Objective: 1 − 3-fold CV accuracy (lower is better). Seeds scored per task: ${tasks.map((t) => `${t} ${seedsOf(t).length}`).join(', ')} (only seeds every method completed).`, '');
  lines.push('Median (mean) over seeds of the best objective within the budget:', '');
  lines.push(`| task | budget | ${methods.join(' | ')} |`, `|---|---|${methods.map(() => '---').join('|')}|`);
  for (const task of tasks) {
    const seeds = seedsOf(task);
    for (const b of budgets) {
      const cells = methods.map((m) => {
        const scores = seeds.map((s) => bestAt(runs.find((r) => r.task === task && r.seed === s && r.method === m)!.values, b));
        return `${fmt(median(scores))} (${fmt(mean(scores))})`;
      });
      lines.push(`| ${task} | ${b} | ${cells.join(' | ')} |`);
    }
  }
  lines.push('', 'Mean rank (1 = best; ties share their mean rank) over tasks × seeds, and per task:', '');
  lines.push(`| budget | tasks | ${methods.join(' | ')} | first |`, `|---|---|${methods.map(() => '---').join('|')}|---|`);
  for (const b of budgets) {
    for (const scope of [tasks, ...tasks.map((t) => [t])]) {
      const { ranks, pairs } = meanRanks(runs, scope, methods, b);
      const bestRank = Math.min(...methods.map((m) => ranks.get(m)!));
      const first = methods.filter((m) => ranks.get(m) === bestRank);
      lines.push(`| ${b} | ${scope.length > 1 ? `all (${pairs} pairs)` : `${scope[0]} (${pairs})`} | ${methods.map((m) => (first.includes(m) ? `**${ranks.get(m)!.toFixed(2)}**` : ranks.get(m)!.toFixed(2))).join(' | ')} | ${first.join(', ')} |`);
    }
  }
  return lines;
}

const readRuns = (dir: string): HpoRun[] => {
  const file = join(dir, 'runs.jsonl.gz');
  const text = existsSync(file) ? gunzipSync(readFileSync(file)).toString('utf8').trim() : readFileSync(join(dir, 'runs.jsonl'), 'utf8').trim();
  return text.split('\n').map((l) => JSON.parse(l) as HpoRun);
};

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (args.reportFrom !== null) {
    console.log(report(args, readRuns(args.reportFrom)).join('\n'));
    return;
  }
  const provenance = currentProvenance(`npm run bench:hpo -- ${process.argv.slice(2).join(' ')}`.trim());
  const started = new Date();
  const loadStart = loadavg();
  const partial = join(mkdtempSync(join(tmpdir(), 'probnes-hpo-runs-')), 'runs.jsonl');
  console.log(`runs as they finish: ${partial}`);
  const { records, versions } = await runAll(args, partial);
  const printed = [
    `Tasks: ${args.tasks.join(', ')} (bench/peers/hpo_sklearn.py); methods: ${args.methods.join(', ')}; budgets ${args.budgets.join(', ')} (one run of ${args.budgets[args.budgets.length - 1]} per task, seed and method, scored at its prefixes); Optuna ${String(versions.optuna)}, scikit-learn ${String(versions.sklearn)}.`,
    ...(args.reuse ? ['', `Runs of ${args.reuse.methods.join(', ')} not run here: read from ${args.reuse.dir} (each run's provenance in runs.jsonl.gz says where it was run).`] : []),
    '',
    ...report(args, records),
  ];
  for (const f of writePublished(args.out, { title: 'bench:hpo', provenance, started, loadStart, printed, records })) console.log(`wrote ${f}`);
  console.log(printed.join('\n'));
}

if (process.argv[1]?.endsWith('hpo.ts')) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
