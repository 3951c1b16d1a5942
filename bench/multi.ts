/**
 * bench:multi — several objectives and constraints through the HTTP API (docs/multi-objective.md),
 * against Optuna's multi-objective samplers, scored by the hypervolume of the feasible front.
 *
 *   npm run bench:multi -- [--problems zdt1,zdt2,zdt3,dtlz2,truss2d,rf-breast-cancer] [--dims 4,8]
 *        [--methods prob-cmaes,bo,random,optuna-nsga2,optuna-tpe] [--seeds 10 | --seeds 0-4]
 *        [--budgets 20,50,100] [--lanes 2] [--shard i/n] [--max-minutes M] [--out DIR]
 *        [--flat FILE] [--report-from DIR|FILE] [--reuse DIR|FILE --reuse-methods m,…] [--cap method@problem=k,…]
 *        [--runs FILE]
 *
 * Problems: ZDT1–3 (M = 2) and DTLZ2 (M = 3) at each of --dims, x ∈ [0, 1]^d, the reference points of
 * BoTorch's test problems (botorch/test_functions/multi_objective.py: ZDT `_ref_point = [11, 11]`,
 * from Yang et al. 2019; DTLZ2 `_ref_val = 1.1` per objective); the two-bar truss (d = 3, one
 * constraint; Deb 2001, Chafekar et al. 2003; reference point (0.06, 1.1e5) from
 * src/engine/benchmarks/truss.ts); `rf-breast-cancer` (d = 4), a random forest's CV error against its
 * number of tree nodes (bench/peers/multi_optuna.py), reference point (0.4, 2000): the error of
 * always answering the majority class is 0.373 and no forest of the space reaches 1,800 nodes.
 * The synthetic problems are evaluated for every method by src/engine/benchmarks/multi.ts, the forest
 * by the Python helper, so every method sees the same numbers.
 *
 * Methods: `prob-cmaes` is the service's default (the study is created WITHOUT `method`, as a user
 * would); `bo` and `random` are passed as `method`. A service study declares `objectives` (all
 * minimised), `constraints`, the `reference_point`, `max_trials` = the largest budget and the seed,
 * and is driven by asking `batch_size` (the study's default) suggestions and reporting `values` and
 * `constraints` (or `infeasible: true` for an evaluation that is not finite: a truss bar of section 0).
 * The peers (`optuna-nsga2`, `optuna-tpe`, `optuna-random`) are Optuna studies driven by ask/tell in
 * bench/peers/multi_optuna.py with `constraints_func` on the constrained problem.
 *
 * Scoring: one run of the largest budget per (problem, d, method, seed); its hypervolume at each
 * budget b·d (--budgets are multiples of d) is that of the feasible points among its first b·d
 * evaluations, by src/engine/multi/hypervolume.ts for every method. Runs go to DIR/runs.jsonl.gz (each
 * with its objective vectors and constraint values) and the table of medians to DIR/results.md;
 * `--flat FILE` appends one line per (run, budget) with self-describing fields. `--shard i/n` runs the
 * jobs whose index is i mod n (0 ≤ i < n), so n invocations split the work. `--reuse DIR --reuse-methods
 * m,…` does not run those methods but takes their runs (same problems, d, seeds and budgets) from DIR's,
 * each with the provenance it was run with: for the peers, whose code does not change with the service.
 * `--runs FILE` appends each run (with its provenance) to FILE as it finishes and does not run again the
 * jobs FILE already holds (at the same budgets), so an interrupted run resumes.
 * `--cap optuna-tpe@dtlz2=50` stops that method's runs on that problem at 50·d evaluations: its larger
 * budgets are not scored (null), and the table leaves those cells out (Optuna 3.1's multi-objective TPE
 * selects its "below" set by a greedy hypervolume subset selection in pure Python, whose cost grows with
 * the first front, and at M = 3 that front is large: 1.4 s per trial at 200 trials on this machine).
 */
import { appendFileSync, existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { getMultiBenchmark } from '../src/engine/benchmarks/multi.js';
import { hypervolume } from '../src/engine/multi/hypervolume.js';
import { median } from './lib/hpo-score.js';
import { currentProvenance, writePublished, type Provenance } from './lib/provenance.js';
import { PythonHelper } from './lib/python-helper.js';
import { startBenchServer } from './lib/server-child.js';

export const DEFAULT_METHOD = 'prob-cmaes';
const SERVICE_METHODS = ['prob-cmaes', 'bo', 'random'];
const PEERS = ['optuna-nsga2', 'optuna-tpe', 'optuna-random'];
const SYNTHETIC = ['zdt1', 'zdt2', 'zdt3', 'dtlz2'];

export interface Args {
  problems: string[];
  dims: number[];
  methods: string[];
  seeds: number[];
  /** Budgets as multiples of d, ascending. */
  budgets: number[];
  lanes: number;
  shard: [number, number];
  maxMinutes: number;
  out: string;
  flat: string | null;
  reportFrom: string | null;
  /** `--runs FILE`: runs are appended here as they finish, and the runs already in it are not run again. */
  runsFile: string | null;
  /** `--cap method@problem=k`: that method's runs on that problem (`*`: every problem) stop at k·d evaluations. */
  caps: { method: string; problem: string; multiple: number }[];
  /** Methods whose runs are read from earlier runs (`--reuse DIR|FILE --reuse-methods m,…`) instead of run. */
  reuse: { from: string; methods: string[] } | null;
}

const USAGE = 'usage: npm run bench:multi -- [--problems a,b] [--dims 4,8] [--methods m,…] [--seeds 10|0-4|1,3] [--budgets 20,50,100] [--lanes 2] [--shard i/n] [--max-minutes M] [--out DIR] [--flat FILE] [--report-from DIR|FILE] [--reuse DIR|FILE --reuse-methods m,…] [--cap method@problem=k,…] [--runs FILE]';

/** `10` → seeds 0…9; `3-5` → 3, 4, 5; `1,4` → 1 and 4. */
export function parseSeeds(s: string): number[] {
  if (/^\d+$/.test(s)) return Array.from({ length: Number(s) }, (_, i) => i);
  const m = /^(\d+)-(\d+)$/.exec(s);
  if (m) return Array.from({ length: Number(m[2]) - Number(m[1]) + 1 }, (_, i) => Number(m[1]) + i);
  const list = s.split(',').map(Number);
  if (list.some((x) => !Number.isInteger(x) || x < 0)) throw new Error(`--seeds ${s}: expected N, A-B or a list`);
  return list;
}

export function parseArgs(argv: string[]): Args {
  const get = (k: string, d: string) => {
    const i = argv.indexOf(`--${k}`);
    return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1]! : d;
  };
  const shard = get('shard', '0/1').split('/').map(Number) as [number, number];
  if (!(Number.isInteger(shard[0]) && Number.isInteger(shard[1]) && shard[0] >= 0 && shard[0] < shard[1])) throw new Error(`--shard ${get('shard', '')}: expected i/n with 0 ≤ i < n\n${USAGE}`);
  const args: Args = {
    problems: get('problems', [...SYNTHETIC, 'truss2d', 'rf-breast-cancer'].join(',')).split(','),
    dims: get('dims', '4,8').split(',').map(Number),
    methods: get('methods', [...SERVICE_METHODS, 'optuna-nsga2', 'optuna-tpe'].join(',')).split(','),
    seeds: parseSeeds(get('seeds', '10')),
    budgets: get('budgets', '20,50,100').split(',').map(Number).sort((a, b) => a - b),
    lanes: Number(get('lanes', '2')),
    shard,
    maxMinutes: Number(get('max-minutes', 'Infinity')),
    out: get('out', `bench-results/multi/${new Date().toISOString().slice(0, 10)}`),
    flat: argv.includes('--flat') ? get('flat', '') : null,
    reportFrom: argv.includes('--report-from') ? get('report-from', '') : null,
    runsFile: argv.includes('--runs') ? get('runs', '') : null,
    caps: get('cap', '').split(',').filter(Boolean).map((c) => {
      const m = /^([\w-]+)@([\w*-]+)=(\d+)$/.exec(c);
      if (!m) throw new Error(`--cap ${c}: expected method@problem=k (k·d evaluations)\n${USAGE}`);
      return { method: m[1]!, problem: m[2]!, multiple: Number(m[3]) };
    }),
    reuse: argv.includes('--reuse') ? { from: get('reuse', ''), methods: get('reuse-methods', '').split(',').filter(Boolean) } : null,
  };
  for (const p of args.problems) if (!PROBLEMS[p]) throw new Error(`unknown problem ${p}; known: ${Object.keys(PROBLEMS).join(', ')}`);
  for (const m of args.methods) if (![...SERVICE_METHODS, ...PEERS].includes(m)) throw new Error(`unknown method ${m}; known: ${[...SERVICE_METHODS, ...PEERS].join(', ')}`);
  return args;
}

/** A parameter as the service takes it; `int`/`log` also tell the Optuna side how to suggest it. */
interface SpaceParam {
  name: string;
  low: number;
  high: number;
  int?: boolean;
  log?: boolean;
}

export interface Problem {
  name: string;
  d: number;
  M: number;
  C: number;
  space: SpaceParam[];
  reference: number[];
  /** HV of the true front against `reference` (null when unknown). */
  maxHypervolume: number | null;
  /** Objectives (minimised) and constraint values, or null when the helper has to evaluate it. */
  evaluate: ((x: number[]) => { f: number[]; c: number[] }) | null;
  source: string;
}

type ProblemDef = { dims: (requested: number[]) => number[]; make: (d: number) => Problem };

const synthetic = (name: string, M: number, reference: number[], refSource: string): ProblemDef => ({
  dims: (requested) => requested,
  make: (d) => {
    const b = getMultiBenchmark(name, d, name === 'dtlz2' ? M : undefined);
    return {
      name, d, M, C: 0,
      space: Array.from({ length: d }, (_, i) => ({ name: `x${i}`, low: b.bounds.lower[i]!, high: b.bounds.upper[i]! })),
      reference,
      maxHypervolume: b.frontHypervolume(reference),
      evaluate: (x) => b.evaluate(x),
      source: `${b.source}; reference point ${refSource}`,
    };
  },
});

export const PROBLEMS: Record<string, ProblemDef> = {
  zdt1: synthetic('zdt1', 2, [11, 11], "BoTorch's ZDT"),
  zdt2: synthetic('zdt2', 2, [11, 11], "BoTorch's ZDT"),
  zdt3: synthetic('zdt3', 2, [11, 11], "BoTorch's ZDT"),
  dtlz2: synthetic('dtlz2', 3, [1.1, 1.1, 1.1], "BoTorch's DTLZ2"),
  truss2d: {
    dims: () => [3],
    make: () => {
      const b = getMultiBenchmark('truss2d');
      return {
        name: 'truss2d', d: 3, M: 2, C: 1,
        space: ['x1', 'x2', 'y'].map((name, i) => ({ name, low: b.bounds.lower[i]!, high: b.bounds.upper[i]! })),
        reference: b.referencePoint,
        maxHypervolume: b.frontHypervolume(),
        evaluate: (x) => b.evaluate(x),
        source: b.source,
      };
    },
  },
  'rf-breast-cancer': {
    dims: () => [4],
    make: () => ({
      name: 'rf-breast-cancer', d: 4, M: 2, C: 0,
      space: [
        { name: 'n_estimators', low: 1, high: 32, int: true },
        { name: 'max_depth', low: 1, high: 12, int: true },
        { name: 'min_samples_leaf', low: 1, high: 32, int: true, log: true },
        { name: 'max_features', low: 0.05, high: 1 },
      ],
      reference: [0.4, 2000],
      maxHypervolume: null,
      evaluate: null,
      source: 'bench/peers/multi_optuna.py: RandomForestClassifier on breast cancer, 3-fold CV error and number of tree nodes',
    }),
  },
};

/** A long-lived multi_optuna.py process: one request at a time. */
class Helper extends PythonHelper {
  constructor() {
    super('bench/peers/multi_optuna.py');
  }
}

/** One evaluation: objectives and constraints, or infeasible when any number is not finite. */
interface Evaluation {
  f: number[];
  c: number[];
  infeasible: boolean;
}

async function evaluate(p: Problem, helper: Helper, params: Record<string, number>): Promise<Evaluation> {
  let f: number[], c: number[];
  if (p.evaluate) ({ f, c } = p.evaluate(p.space.map((s) => params[s.name]!)));
  else {
    f = (await helper.request({ eval: { task: p.name, params } })).values as number[];
    c = [];
  }
  return { f, c, infeasible: ![...f, ...c].every(Number.isFinite) };
}

export interface MultiRun {
  problem: string;
  d: number;
  M: number;
  C: number;
  method: string;
  seed: number;
  reference_point: number[];
  max_hypervolume: number | null;
  /** Evaluation counts scored (budget multiples × d) and the hypervolume at each. */
  budgets: number[];
  /** null at a budget the run did not reach (`--cap`). */
  hypervolume: (number | null)[];
  evaluations: number;
  feasible: number;
  /** Every evaluation in order: objectives, constraint values (empty without constraints), infeasible. */
  f: number[][];
  c: number[][];
  infeasible: number[];
  seconds: number;
  /** The front's hypervolume the service reports at the end (service methods; a cross-check). */
  service_hypervolume?: number | null;
  batch_size?: number;
  reason?: string | null;
}

/** HV of the feasible points among the first n (a point is feasible when finite and every c ≤ 0). */
export function feasibleHypervolume(f: readonly number[][], c: readonly number[][], infeasible: ReadonlySet<number>, n: number, reference: number[]): number {
  const pts: number[][] = [];
  for (let i = 0; i < Math.min(n, f.length); i++) if (!infeasible.has(i) && (c[i] ?? []).every((v) => v <= 0)) pts.push(f[i]!);
  return hypervolume(pts, reference);
}

async function http(base: string, method: string, path: string, body?: object): Promise<Record<string, unknown>> {
  const res = await fetch(`${base}${path}`, { method, headers: body ? { 'content-type': 'application/json' } : {}, body: body ? JSON.stringify(body) : undefined });
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

type Trace = { f: number[][]; c: number[][]; infeasible: number[]; extra: Partial<MultiRun> };

/** One study of a service method through the HTTP API, as a user drives it. */
async function runService(base: string, helper: Helper, p: Problem, method: string, seed: number, budget: number): Promise<Trace> {
  const body: Record<string, unknown> = {
    name: `${p.name}-d${p.d}-${method}-${seed}`,
    parameters: p.space.map((s) => ({ name: s.name, bounds: [s.low, s.high], ...(s.int ? { type: 'int' } : {}), ...(s.log ? { scale: 'log' } : {}) })),
    objectives: Array.from({ length: p.M }, (_, i) => ({ name: `f${i + 1}`, direction: 'minimize' })),
    ...(p.C > 0 ? { constraints: Array.from({ length: p.C }, (_, i) => ({ name: `c${i + 1}` })) } : {}),
    reference_point: p.reference,
    max_trials: budget,
    seed,
  };
  // The default method is what a user gets without naming one.
  if (method !== DEFAULT_METHOD) body.method = method;
  const study = await http(base, 'POST', '/v1/studies', body);
  const id = String(study.id);
  const batch = Number(study.batch_size);
  const t: Trace = { f: [], c: [], infeasible: [], extra: { batch_size: batch, reason: null } };
  while (t.f.length < budget) {
    const s = await http(base, 'GET', `/v1/studies/${id}/suggestions?count=${Math.min(batch, budget - t.f.length)}&client_id=bench`);
    const trials = s.trials as { trial_id: number; parameters: Record<string, number> }[];
    if (trials.length === 0) {
      t.extra.reason = String(s.reason);
      break;
    }
    const observations = [];
    for (const tr of trials) {
      const e = await evaluate(p, helper, tr.parameters);
      if (e.infeasible) t.infeasible.push(t.f.length);
      t.f.push(e.f);
      t.c.push(e.c);
      observations.push(e.infeasible ? { trial_id: tr.trial_id, infeasible: true } : { trial_id: tr.trial_id, values: e.f, ...(p.C > 0 ? { constraints: e.c } : {}) });
    }
    await http(base, 'POST', `/v1/studies/${id}/observations`, { observations });
  }
  try {
    t.extra.service_hypervolume = (await http(base, 'GET', `/v1/studies/${id}/front?page_size=1`)).hypervolume as number | null;
  } catch {
    t.extra.service_hypervolume = null;
  }
  return t;
}

/** One Optuna study driven by ask/tell in the helper; the evaluations are done here. */
async function runPeer(helper: Helper, p: Problem, method: string, seed: number, budget: number): Promise<Trace> {
  const key = `${p.name}-${p.d}-${method}-${seed}`;
  await helper.request({ start: { key, sampler: method.slice('optuna-'.length), seed, space: p.space, objectives: p.M, constraints: p.C } });
  const t: Trace = { f: [], c: [], infeasible: [], extra: {} };
  for (let i = 0; i < budget; i++) {
    const params = (await helper.request({ ask: { key } })).params as Record<string, number>;
    const e = await evaluate(p, helper, params);
    if (e.infeasible) t.infeasible.push(i);
    t.f.push(e.f);
    t.c.push(e.c);
    // Optuna takes no infeasible flag: a non-finite number becomes a huge finite one (dominated, violating).
    const big = (v: number) => (Number.isFinite(v) ? v : 1e300);
    await helper.request({ tell: { key, values: e.f.map(big), constraints: p.C > 0 ? e.c.map(big) : null } });
  }
  await helper.request({ end: { key } });
  return t;
}

function score(p: Problem, method: string, seed: number, budgets: number[], t: Trace, seconds: number): MultiRun {
  const inf = new Set(t.infeasible);
  const counts = budgets.map((b) => b * p.d);
  const feasible = t.f.filter((_, i) => !inf.has(i) && (t.c[i] ?? []).every((v) => v <= 0)).length;
  return {
    problem: p.name, d: p.d, M: p.M, C: p.C, method, seed,
    reference_point: p.reference, max_hypervolume: p.maxHypervolume,
    budgets: counts,
    hypervolume: counts.map((n) => (t.f.length >= n ? feasibleHypervolume(t.f, t.c, inf, n, p.reference) : null)),
    evaluations: t.f.length, feasible,
    f: t.f, c: p.C > 0 ? t.c : [], infeasible: t.infeasible,
    seconds, ...t.extra,
  };
}

/** The jobs of this invocation (after sharding), cheap problems and seeds first. */
export function jobsOf(args: Pick<Args, 'problems' | 'dims' | 'methods' | 'seeds' | 'shard'>): { problem: string; d: number; method: string; seed: number }[] {
  const all = args.seeds.flatMap((seed) => args.problems.flatMap((problem) => PROBLEMS[problem]!.dims(args.dims).flatMap((d) => args.methods.map((method) => ({ problem, d, method, seed })))));
  return all.filter((_, i) => i % args.shard[1] === args.shard[0]);
}

/** The flat lines of a run: one per budget, self-describing. */
export function flatLines(r: MultiRun): object[] {
  return r.budgets.flatMap((b, i) => (r.hypervolume[i] === null ? [] : [{
    problem: r.problem, d: r.d, M: r.M, constraints: r.C, sampler: r.method, seed: r.seed, budget: b,
    hypervolume: r.hypervolume[i], reference_point: r.reference_point, max_hypervolume: r.max_hypervolume,
    feasible: r.f.slice(0, b).filter((_, j) => !r.infeasible.includes(j) && (r.c[j] ?? []).every((v) => v <= 0)).length,
  }]));
}

/** The runs of `--reuse` that this invocation would otherwise run (the same jobs and budgets). */
function reusedRuns(args: Args): MultiRun[] {
  if (!args.reuse) return [];
  const wanted = new Set(jobsOf({ ...args, methods: args.reuse.methods }).map((j) => `${j.problem}/${j.d}/${j.method}/${j.seed}`));
  const runs = readRuns(args.reuse.from).filter((r) => r.budgets.join() === args.budgets.map((b) => b * r.d).join() && wanted.delete(`${r.problem}/${r.d}/${r.method}/${r.seed}`));
  if (wanted.size > 0) throw new Error(`--reuse ${args.reuse.from} lacks ${wanted.size} runs, e.g. ${[...wanted][0]} (at budgets ${args.budgets.join(', ')} × d)`);
  return runs;
}

async function runAll(args: Args, partial: string, provenance: Provenance): Promise<{ runs: MultiRun[]; versions: Record<string, unknown> }> {
  const keyOf = (r: { problem: string; d: number; method: string; seed: number }) => `${r.problem}/${r.d}/${r.method}/${r.seed}`;
  const todo = new Set(jobsOf(args).filter((j) => !args.reuse?.methods.includes(j.method)).map(keyOf));
  const resumed = existsSync(partial) ? readRuns(partial).filter((r) => r.budgets.join() === args.budgets.map((b) => b * r.d).join() && todo.delete(keyOf(r))) : [];
  const reused = [...reusedRuns(args), ...resumed];
  const jobs = jobsOf(args).filter((j) => todo.has(keyOf(j)));
  const needServer = jobs.some((j) => SERVICE_METHODS.includes(j.method));
  const server = needServer ? await startBenchServer('probnes-multi-') : null;
  const helpers = Array.from({ length: Math.max(1, Math.min(args.lanes, jobs.length)) }, () => new Helper());
  const versions = await helpers[0]!.ready;
  await Promise.all(helpers.map((h) => h.ready));
  const runs: MultiRun[] = [...reused];
  const deadline = Date.now() + args.maxMinutes * 60_000;
  let next = 0;
  console.log(`${jobs.length} runs, ${helpers.length} lanes${reused.length ? `, ${reused.length} runs read from ${[args.reuse?.from, resumed.length ? partial : null].filter(Boolean).join(' and ')}` : ''}`);
  try {
    await Promise.all(helpers.map(async (helper) => {
      for (;;) {
        const job = jobs[next];
        if (!job || Date.now() > deadline) return;
        next++;
        const p = PROBLEMS[job.problem]!.make(job.d);
        const cap = args.caps.find((c) => c.method === job.method && (c.problem === job.problem || c.problem === '*'));
        const budget = Math.min(args.budgets[args.budgets.length - 1]!, cap?.multiple ?? Infinity) * p.d;
        const t0 = performance.now();
        const trace = job.method.startsWith('optuna-') ? await runPeer(helper, p, job.method, job.seed, budget) : await runService(server!.base, helper, p, job.method, job.seed, budget);
        const run = score(p, job.method, job.seed, args.budgets, trace, (performance.now() - t0) / 1000);
        runs.push(run);
        appendFileSync(partial, `${JSON.stringify({ ...run, provenance })}\n`);
        if (args.flat) appendFileSync(args.flat, flatLines(run).map((l) => JSON.stringify(l)).join('\n') + '\n');
        console.log(`${run.problem} d=${run.d} ${run.method} seed ${run.seed}: HV ${run.hypervolume.map((h) => (h === null ? '–' : h.toPrecision(6))).join(' / ')} (${run.seconds.toFixed(1)} s${run.reason ? `, stopped: ${run.reason}` : ''})`);
      }
    }));
  } finally {
    helpers.forEach((h) => h.close());
    server?.stop();
  }
  return { runs, versions };
}

/** Ranks (1 = largest) of `xs`, ties sharing their mean rank. */
function ranksDesc(xs: number[]): number[] {
  return xs.map((x) => xs.filter((y) => y > x).length + (xs.filter((y) => y === x).length + 1) / 2);
}

const fmtHv = (x: number) => (Number.isFinite(x) ? (Math.abs(x) >= 1 ? x.toPrecision(6) : x.toPrecision(4)) : '–');

/** The table of results.md: median HV per problem × d × budget and method, and the default method's rank. */
export function report(runs: readonly MultiRun[], methods: readonly string[]): string[] {
  const keys = [...new Set(runs.map((r) => `${r.problem}\u0000${r.d}`))];
  const lines = [
    'Median over seeds of the hypervolume of the feasible points among the first n evaluations (higher is better; the',
    'reference point and the true front\'s HV in the first column; seeds scored: those every method completed).',
    `The default method's rank is that of its median among the ${methods.length} medians (1 = best).`,
    '',
    `| problem (d, M; reference; front HV) | n | seeds | ${methods.join(' | ')} | ${DEFAULT_METHOD} rank |`,
    `|---|---|---|${methods.map(() => '---').join('|')}|---|`,
  ];
  const rankSums = new Map(methods.map((m) => [m, 0]));
  let cells = 0;
  for (const key of keys) {
    const [problem, dStr] = key.split('\u0000');
    const mine = runs.filter((r) => r.problem === problem && r.d === Number(dStr));
    const seeds = [...new Set(mine.map((r) => r.seed))].filter((s) => methods.every((m) => mine.some((r) => r.method === m && r.seed === s))).sort((a, b) => a - b);
    if (seeds.length === 0) continue;
    const first = mine[0]!;
    first.budgets.forEach((n, bi) => {
      // A method whose runs stopped before n (--cap) has no median there and is not ranked in the cell.
      const medians = methods.map((m) => {
        const hv = seeds.map((s) => mine.find((r) => r.method === m && r.seed === s)!.hypervolume[bi] ?? null);
        return hv.includes(null) ? NaN : median(hv as number[]);
      });
      const ranks = ranksDesc(medians.filter(Number.isFinite));
      const rankOf = (i: number) => (Number.isFinite(medians[i]) ? ranks[medians.slice(0, i).filter(Number.isFinite).length]! : NaN);
      if (medians.every(Number.isFinite)) {
        methods.forEach((m, i) => rankSums.set(m, rankSums.get(m)! + rankOf(i)));
        cells++;
      }
      const best = Math.max(...medians.filter(Number.isFinite));
      const label = bi === 0 ? `${problem} (${first.d}, ${first.M}; (${first.reference_point.join(', ')}); ${first.max_hypervolume === null ? '–' : fmtHv(first.max_hypervolume)})` : '';
      const defaultRank = methods.includes(DEFAULT_METHOD) && Number.isFinite(rankOf(methods.indexOf(DEFAULT_METHOD))) ? `${rankOf(methods.indexOf(DEFAULT_METHOD))}/${ranks.length}` : '–';
      lines.push(`| ${label} | ${n} | ${seeds.length} | ${medians.map((v) => (v === best ? `**${fmtHv(v)}**` : fmtHv(v))).join(' | ')} | ${defaultRank} |`);
    });
  }
  if (cells > 0) {
    lines.push('', `Mean rank of the medians over the ${cells} (problem, d, n) cells where every method has one: ${methods.map((m) => `${m} ${(rankSums.get(m)! / cells).toFixed(2)}`).join(', ')}.`);
  }
  return lines;
}

export function readRuns(from: string): MultiRun[] {
  const file = statSync(from).isDirectory() ? (existsSync(join(from, 'runs.jsonl.gz')) ? join(from, 'runs.jsonl.gz') : join(from, 'runs.jsonl')) : from;
  const text = file.endsWith('.gz') ? gunzipSync(readFileSync(file)).toString('utf8') : readFileSync(file, 'utf8');
  return text.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as MultiRun);
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (args.reportFrom !== null) {
    const runs = readRuns(args.reportFrom).filter((r) => args.methods.includes(r.method) && args.problems.includes(r.problem));
    console.log(report(runs, args.methods).join('\n'));
    return;
  }
  const provenance = currentProvenance(`npm run bench:multi -- ${process.argv.slice(2).join(' ')}`.trim());
  const started = new Date();
  const loadStart = loadavg();
  const partial = args.runsFile ?? join(mkdtempSync(join(tmpdir(), 'probnes-multi-runs-')), 'runs.jsonl');
  console.log(`runs as they finish: ${partial}`);
  const { runs, versions } = await runAll(args, partial, provenance);
  const printed = [
    `Problems: ${args.problems.join(', ')} (d ∈ {${args.dims.join(', ')}} for ZDT and DTLZ2); methods: ${args.methods.join(', ')} (${DEFAULT_METHOD} = the service's default, no \`method\` given); seeds ${args.seeds[0]}–${args.seeds[args.seeds.length - 1]}; budgets ${args.budgets.join(', ')} × d (one run of ${args.budgets[args.budgets.length - 1]}·d per problem, d, method and seed, scored at its prefixes)${args.shard[1] > 1 ? `; shard ${args.shard[0]}/${args.shard[1]}` : ''}; Optuna ${String(versions.optuna)}, scikit-learn ${String(versions.sklearn)}.`,
    ...(args.reuse ? ['', `Runs of ${args.reuse.methods.join(', ')} not run here: read from ${args.reuse.from} (each run's provenance in runs.jsonl.gz says where it was run).`] : []),
    '',
    ...report(runs, args.methods),
  ];
  for (const f of writePublished(args.out, { title: 'bench:multi', provenance, started, loadStart, printed, records: runs })) console.log(`wrote ${f}`);
  console.log(printed.join('\n'));
}

if (process.argv[1]?.endsWith('multi.ts')) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
