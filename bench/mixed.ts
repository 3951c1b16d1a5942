/**
 * bench:mixed — categorical parameters against Optuna's TPE sampler and random search.
 *
 *   npm run bench:mixed -- [--functions 1,8,15,21] [--seeds 5] [--budget 40] [--methods random,bo,pibo,cmaes,prob-cmaes,tpe]
 *                          [--sklearn] [--sklearn-seeds 3] [--sklearn-budget 30] [--out DIR] [--report-from DIRS]
 *
 * Synthetic problems (documented construction): BBOB function f (bbob.ts, instance = seed + 1) in
 * D = d_c + m dimensions (default d_c = 2 continuous, m = 2 categorical with K = 5 choices each).
 * Coordinate d_c + j is restricted to the K levels −4, −2, 0, 2, 4 of the [−5, 5] domain, and
 * choice a of categorical parameter j stands for level π_j(a), π_j a permutation drawn per instance
 * (seeded), so a choice's index carries no order: f_mixed(u, c) = f([u, level(π(c))]) − f_opt.
 * Continuous parameters have bounds [−5, 5] (the default prior N(0, 2.5²)); choices are the labels
 * "c0" … "c4" with the uniform prior. Every method gets the same problems and budget; the service's
 * methods run through the engine exactly as the server drives it (initSpec, ask, handOut, tell; batch
 * size 1 for random, BO and πBO, CMA-ES's default λ for cmaes, i.e. CatCMA, 3 for prob-cmaes), TPE (Optuna's defaults, seeded) through bench/peers/tpe_mixed_runner.py, which proposes
 * points and gets these values over a pipe. Reported: f − f_opt of the best evaluation at the budget.
 *
 * Real task (--sklearn): scikit-learn's SVC on the digits data (kernel choice, log C, log gamma;
 * 1 − 3-fold CV accuracy), bench/peers/mixed_sklearn.py, the service's methods through the Python
 * client against a real server process started here, TPE in-process.
 *
 * Raw runs go to DIR/runs.jsonl (and DIR/sklearn.jsonl), the table to DIR/results.md.
 * `--report-from DIR1,DIR2 --out DIR` rebuilds the tables from earlier runs (several passes together).
 */
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { gunzipSync } from 'node:zlib';
import { bbobProblem } from '../src/engine/benchmarks/bbob.js';
import { generationSize, getStrategy, methodFacts, resolveOptions, Rng, type BaseState, type MethodName, type Observation } from '../src/engine/index.js';
import { checkStudySpec, effectivePrior, type StudySpecInput } from '../src/domain/studies/study-spec.js';
import { searchSpace } from '../src/domain/studies/transforms.js';
import { handOut, initSpec } from '../src/domain/studies/engine-ops.js';
import { startBenchServer } from './lib/server-child.js';
import type { ParamValue } from '../src/domain/studies/study-request.js';

interface Args {
  functions: number[];
  seeds: number;
  budget: number;
  methods: string[];
  dc: number;
  m: number;
  K: number;
  sklearn: boolean;
  sklearnSeeds: number;
  sklearnBudget: number;
  out: string;
}

function parseArgs(argv: string[]): Args {
  const get = (k: string, d: string) => {
    const i = argv.indexOf(`--${k}`);
    return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1]! : d;
  };
  const stamp = new Date().toISOString().slice(0, 10);
  return {
    functions: get('functions', '1,8,15,21').split(',').map(Number),
    seeds: Number(get('seeds', '5')),
    budget: Number(get('budget', '40')),
    methods: get('methods', 'random,bo,pibo,cmaes,prob-cmaes,tpe').split(','),
    dc: Number(get('dc', '2')),
    m: Number(get('m', '2')),
    K: Number(get('k', '5')),
    sklearn: argv.includes('--sklearn'),
    sklearnSeeds: Number(get('sklearn-seeds', '3')),
    sklearnBudget: Number(get('sklearn-budget', '30')),
    out: get('out', `bench-results/mixed/${stamp}`),
  };
}

/** The mixed problem of the header for BBOB function fn, instance `instance`. */
export function mixedProblem(fn: number, dc: number, m: number, K: number, instance: number) {
  const p = bbobProblem(fn, dc + m, instance);
  const levels = Array.from({ length: K }, (_, a) => -4 + (8 * a) / (K - 1));
  const rng = Rng.fromSeed(7919 * instance + fn);
  const perm = Array.from({ length: m }, () => {
    const order = Array.from({ length: K }, (_, a) => a);
    for (let i = K - 1; i > 0; i--) {
      const j = Math.floor(rng.uniform() * (i + 1));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    return order;
  });
  const f = (u: readonly number[], c: readonly number[]) => p.f([...u.map((v) => Math.min(5, Math.max(-5, v))), ...c.map((a, j) => levels[perm[j]![a]!]!)]) - p.optimum;
  return { f, fOpt: p.optimum };
}

/**
 * Batch size: 1 (sequential) for random, BO and πBO; CMA-ES's default λ = 4 + ⌊3 ln D⌋ (it ranks a
 * generation); the API's default 3 for the ProbNES methods.
 */
const batchOf = (method: MethodName, D: number) => (getStrategy(method).minBatch > 1 ? 4 + Math.floor(3 * Math.log(D)) : methodFacts(method).family === 'probnes' ? 3 : 1);

function studySpec(args: Args, method: MethodName): StudySpecInput {
  return {
    name: 'mixed',
    direction: 'minimize',
    parameters: [
      ...Array.from({ length: args.dc }, (_, i) => ({ name: `x${i}`, type: 'float' as const, scale: 'linear' as const, bounds: [-5, 5] as [number, number] })),
      ...Array.from({ length: args.m }, (_, j) => ({ name: `c${j}`, type: 'categorical' as const, choices: Array.from({ length: args.K }, (_, a) => `c${a}`) })),
    ],
    method,
    batch_size: batchOf(method, args.dc + args.m),
    options: {},
    lease_seconds: 600,
    metadata: {},
  } as unknown as StudySpecInput;
}

/** One run of a service method through the engine, as the server drives it. */
function runService(args: Args, method: MethodName, f: (u: number[], c: number[]) => number, seed: number): number[] {
  const spec = studySpec(args, method);
  checkStudySpec(spec);
  const eff = effectivePrior(spec);
  const space = searchSpace(eff.parameters, eff.prior);
  const options = resolveOptions(method, space.parameters.length, {});
  const strategy = getStrategy(method);
  let state: BaseState = strategy.init(initSpec(method, spec.batch_size, options, space, spec.max_trials ?? null), Rng.fromSeed(seed));
  const history: Observation[] = [];
  const values: number[] = [];
  while (values.length < args.budget) {
    const asked = strategy.ask(state, { history: [...history], pending: [] }, Math.min(generationSize(state), args.budget - values.length));
    state = asked.state;
    const batch = asked.points.map((uPoint) => {
      const h = handOut(space, uPoint);
      const p = h.parameters as Record<string, ParamValue>;
      const u = Array.from({ length: args.dc }, (_, i) => p[`x${i}`] as number);
      const c = Array.from({ length: args.m }, (_, j) => Number(String(p[`c${j}`]).slice(1)));
      const y = f(u, c);
      values.push(y);
      return { x: h.point, y };
    });
    history.push(...batch);
    state = strategy.tell(state, { batch, history: [...history] });
  }
  return values.slice(0, args.budget);
}

/** One TPE run through the pipe protocol of bench/peers/tpe_mixed_runner.py. */
function runTpe(args: Args, f: (u: number[], c: number[]) => number, seed: number): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/python3', ['bench/peers/tpe_mixed_runner.py'], { stdio: ['pipe', 'pipe', 'pipe'] });
    const values: number[] = [];
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    createInterface({ input: child.stdout }).on('line', (line) => {
      const msg = JSON.parse(line) as { x?: number[]; c?: number[]; done?: boolean; error?: string };
      if (msg.error) return reject(new Error(`tpe: ${msg.error}`));
      if (msg.x && msg.c) {
        const y = f(msg.x, msg.c);
        values.push(y);
        child.stdin.write(`${JSON.stringify({ y })}\n`);
      } else if (msg.done) {
        child.stdin.end();
        resolve(values);
      }
    });
    child.on('close', (code) => (values.length < args.budget ? reject(new Error(`tpe runner exited (${code}): ${stderr}`)) : undefined));
    child.stdin.write(`${JSON.stringify({ dim: args.dc, choices: Array.from({ length: args.m }, () => args.K), lower: -5, upper: 5, budget: args.budget, seed })}\n`);
  });
}

const bestOf = (v: number[]) => v.reduce((a, b) => Math.min(a, b), Infinity);
const median = (v: number[]) => {
  const s = [...v].sort((a, b) => a - b);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2]! : (s[n / 2 - 1]! + s[n / 2]!) / 2;
};
const fmt = (x: number) => (x === 0 ? '0' : Math.abs(x) >= 100 || Math.abs(x) < 0.01 ? x.toExponential(2) : x.toFixed(3));

async function syntheticRuns(args: Args): Promise<Map<string, number[]>> {
  const finals = new Map<string, number[]>();
  const file = join(args.out, 'runs.jsonl');
  writeFileSync(file, '');
  for (const fn of args.functions) {
    for (let seed = 0; seed < args.seeds; seed++) {
      const { f } = mixedProblem(fn, args.dc, args.m, args.K, seed + 1);
      for (const method of args.methods) {
        const t0 = performance.now();
        const values = method === 'tpe' ? await runTpe(args, f, seed) : runService(args, method as MethodName, f, seed);
        const seconds = (performance.now() - t0) / 1000;
        appendFileSync(file, `${JSON.stringify({ fn, instance: seed + 1, seed, method, dc: args.dc, m: args.m, K: args.K, budget: args.budget, values, seconds })}\n`);
        const key = `${fn}:${method}`;
        finals.set(key, [...(finals.get(key) ?? []), bestOf(values)]);
        console.log(`f${fn} seed ${seed} ${method}: best ${fmt(bestOf(values))} (${seconds.toFixed(1)} s)`);
      }
    }
  }
  return finals;
}

async function sklearnRuns(args: Args): Promise<string> {
  const { base, stop } = await startBenchServer('probnes-mixed-');
  const file = join(args.out, 'sklearn.jsonl');
  writeFileSync(file, '');
  const methods = args.methods.join(',');
  try {
    await new Promise<void>((resolve, reject) => {
      const py = spawn('/usr/bin/python3', ['bench/peers/mixed_sklearn.py', '--url', base, '--methods', methods, '--seeds', String(args.sklearnSeeds), '--budget', String(args.sklearnBudget)], { stdio: ['ignore', 'pipe', 'inherit'] });
      createInterface({ input: py.stdout }).on('line', (line) => {
        appendFileSync(file, `${line}\n`);
        const r = JSON.parse(line) as { method: string; seed: number; values: number[]; seconds: number };
        console.log(`svc seed ${r.seed} ${r.method}: best error ${fmt(bestOf(r.values))} (${r.seconds.toFixed(1)} s)`);
      });
      py.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`mixed_sklearn.py exited ${code}`))));
    });
  } finally {
    stop();
  }
  return file;
}

interface SyntheticRun {
  fn: number;
  seed: number;
  method: string;
  values: number[];
}
interface SklearnRun {
  method: string;
  seed: number;
  values: number[];
  seconds: number;
}

/** The records of a JSON-lines file, or of its gzipped copy (`<file>.gz`, as published); none if neither exists. */
const readJsonl = <T>(file: string): T[] => {
  const text = existsSync(file) ? readFileSync(file, 'utf8').trim() : existsSync(`${file}.gz`) ? gunzipSync(readFileSync(`${file}.gz`)).toString('utf8').trim() : '';
  return text ? text.split('\n').map((l) => JSON.parse(l) as T) : [];
};

/** The tables of results.md from the raw runs (the methods' columns in `methods` order). */
function report(args: Args, synthetic: SyntheticRun[], sklearn: SklearnRun[]): string[] {
  const methods = args.methods.filter((m) => synthetic.some((r) => r.method === m) || sklearn.some((r) => r.method === m));
  const lines: string[] = [`# bench:mixed (${new Date().toISOString()})`, ''];
  if (synthetic.length > 0) {
    const fns = [...new Set(synthetic.map((r) => r.fn))];
    const seeds = [...new Set(synthetic.map((r) => r.seed))].sort((x, y) => x - y);
    const best = (fn: number, m: string, seed: number) => bestOf(synthetic.find((r) => r.fn === fn && r.method === m && r.seed === seed)!.values);
    lines.push(`Synthetic: BBOB f in D = ${args.dc} + ${args.m} dimensions, the last ${args.m} categorical with K = ${args.K} shuffled levels; budget ${args.budget}, ${seeds.length} instances; median over instances of f − f_opt of the best evaluation (lower is better).`, '');
    lines.push(`| function | ${methods.join(' | ')} |`, `|---|${methods.map(() => '---').join('|')}|`);
    for (const fn of fns) lines.push(`| f${fn} | ${methods.map((m) => fmt(median(seeds.map((s) => best(fn, m, s))))).join(' | ')} |`);
    // Mean rank per method over (function, instance) pairs (1 = best; ties share the mean rank).
    const ranks = new Map<string, number[]>();
    for (const fn of fns) {
      for (const s of seeds) {
        const vals = methods.map((m) => best(fn, m, s));
        methods.forEach((m, i) => {
          const below = vals.filter((v) => v < vals[i]!).length, equal = vals.filter((v) => v === vals[i]!).length;
          ranks.set(m, [...(ranks.get(m) ?? []), below + (equal + 1) / 2]);
        });
      }
    }
    lines.push(`| mean rank | ${methods.map((m) => (ranks.get(m)!.reduce((a, b) => a + b, 0) / ranks.get(m)!.length).toFixed(2)).join(' | ')} |`, '');
  }
  if (sklearn.length > 0) {
    const seeds = new Set(sklearn.map((r) => r.seed)).size;
    // The task saturates (many configurations reach the same CV accuracy), so the table also gives how
    // fast each method gets there: evaluations until the best is within 0.002 of the best any run found.
    const target = Math.min(...sklearn.map((r) => bestOf(r.values))) + 0.002;
    const reach = (v: number[]) => {
      let b = Infinity;
      for (let i = 0; i < v.length; i++) if ((b = Math.min(b, v[i]!)) <= target) return i + 1;
      return Infinity;
    };
    lines.push(`Real task: SVC on digits (kernel ∈ {linear, rbf, poly, sigmoid}, log C, log gamma), 1 − 3-fold CV accuracy, budget ${sklearn[0]!.values.length}, ${seeds} seeds: median best error (and per-seed bests), evaluations until the best error is ≤ ${fmt(target)} (the best of all runs + 0.002; ∞: not within the budget), and the mean error of all evaluations.`, '');
    lines.push('| method | median best error | per seed | evaluations to target (per seed) | mean error of evaluations | seconds per run |', '|---|---|---|---|---|---|');
    for (const m of methods) {
      const rs = sklearn.filter((r) => r.method === m).sort((x, y) => x.seed - y.seed);
      if (rs.length === 0) continue;
      const bests = rs.map((r) => bestOf(r.values));
      const mean = rs.flatMap((r) => r.values).reduce((a, b) => a + b, 0) / rs.reduce((a, r) => a + r.values.length, 0);
      lines.push(`| ${m} | ${fmt(median(bests))} | ${bests.map(fmt).join(', ')} | ${rs.map((r) => (Number.isFinite(reach(r.values)) ? String(reach(r.values)) : '∞')).join(', ')} | ${fmt(mean)} | ${median(rs.map((r) => r.seconds)).toFixed(1)} |`);
    }
    lines.push('');
  }
  return lines;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  mkdirSync(args.out, { recursive: true });
  const from = process.argv.indexOf('--report-from');
  let synthetic: SyntheticRun[] = [], sklearn: SklearnRun[] = [];
  if (from >= 0) {
    // Report only: the tables from earlier runs (several directories' runs together).
    for (const dir of process.argv[from + 1]!.split(',')) {
      synthetic.push(...readJsonl<SyntheticRun>(join(dir, 'runs.jsonl')));
      sklearn.push(...readJsonl<SklearnRun>(join(dir, 'sklearn.jsonl')));
    }
  } else {
    if (args.functions.length > 0 && args.seeds > 0) {
      await syntheticRuns(args);
      synthetic = readJsonl<SyntheticRun>(join(args.out, 'runs.jsonl'));
    }
    if (args.sklearn) sklearn = readJsonl<SklearnRun>(await sklearnRuns(args));
  }
  const lines = report(args, synthetic, sklearn);
  writeFileSync(join(args.out, 'results.md'), `${lines.join('\n')}\n`);
  console.log(lines.join('\n'));
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
