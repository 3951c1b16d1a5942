/**
 * Command-line options of bench/paper.ts and the job list they expand to. Defaults are the paper's
 * test-function experiment (ALGORITHM.md §7).
 */
import { parseArgs } from 'node:util';
import { isMethodName, type MethodName, type Options } from '../../src/engine/index.js';
import { registeredMethods } from '../../src/engine/strategies/registry.js';
import type { RunSpec } from './run.js';
import { BENCH_TASKS } from './tasks.js';

/** The paper's tasks; Rastrigin runs in 1-D (the figure) and 2-D (the text). */
export const PAPER_FUNCTIONS = ['ackley:2', 'rastrigin:1', 'rastrigin:2', 'branin', 'griewank:2', 'levy:2', 'shekel', 'styblinski-tang:2', 'three-hump-camel'];

export interface BenchConfig {
  methods: MethodName[];
  tasks: { fn: string; dim: number }[];
  seeds: number;
  budget: number;
  batch: number;
  /** Explicit prior (--prior-mean/--prior-std), or null: the paper's N(−1, I), or a task's own prior. */
  priorMean: number | null;
  priorStd: number | null;
  options: Options;
  /** BO box in x as [lo, hi] per coordinate, or null for the default. */
  box: [number, number] | null;
  clip: boolean | null;
  workers: number;
  out: string;
  /** Keep the successful runs already in <out>/runs.jsonl and run only the missing ones. */
  resume: boolean;
}

export const USAGE = `usage: npm run bench:paper -- [options]
  --methods a,b          methods (default: every registered method)
  --functions f[:d],…    tasks (default: ${PAPER_FUNCTIONS.join(',')}); known: ${Object.keys(BENCH_TASKS).join(', ')}
  --dims 2,5             dimensions for any-dimension tasks given without :d
  --seeds 15 --budget 153 --batch 3
  --prior-mean -1 --prior-std 1   prior N(m, s²I) in x (default: −1, 1; tasks with their own prior use it)
  --box -3,3             BO/πBO box per coordinate in x (default −3,3; tasks with a prior: their bounds)
  --clip / --no-clip     project points onto the task bounds (default: only tasks with their own prior)
  --options '{"profile":"paper"}'   options, each passed to the methods that declare it
  --profile paper|default          shortcut for the ProbNES profile option
  --workers 2            worker threads
  --resume               keep the runs already in <out>/runs.jsonl, run only the missing ones
  --out bench-results/<name>`;

function list(s: string | undefined): string[] | null {
  return s ? s.split(',').map((t) => t.trim()).filter(Boolean) : null;
}

export function parseConfig(argv: string[]): BenchConfig {
  const { values: v } = parseArgs({
    args: argv,
    options: {
      methods: { type: 'string' }, functions: { type: 'string' }, dims: { type: 'string' },
      seeds: { type: 'string' }, budget: { type: 'string' }, batch: { type: 'string' },
      'prior-mean': { type: 'string' }, 'prior-std': { type: 'string' }, box: { type: 'string' },
      clip: { type: 'boolean' }, 'no-clip': { type: 'boolean' },
      options: { type: 'string' }, profile: { type: 'string' }, workers: { type: 'string' }, out: { type: 'string' }, resume: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    allowNegative: false,
    strict: true,
  });
  if (v.help) throw new UsageError(USAGE);
  const methods = (list(v.methods) ?? registeredMethods()).map((m) => {
    if (!isMethodName(m) || !registeredMethods().includes(m)) throw new UsageError(`unknown or unregistered method ${m}; registered: ${registeredMethods().join(', ')}`);
    return m;
  });
  const dims = list(v.dims)?.map(Number) ?? null;
  const tasks = (list(v.functions) ?? PAPER_FUNCTIONS).flatMap((spec) => {
    const [fn, d] = spec.split(':');
    const def = BENCH_TASKS[fn];
    if (!def) throw new UsageError(`unknown function ${fn}`);
    const ds = d ? [Number(d)] : def.dim === 'any' ? (dims ?? [def.defaultDim]) : [def.dim];
    return ds.map((dim) => (def.make(dim), { fn, dim })); // make() validates the dimension
  });
  const options: Options = v.options ? JSON.parse(v.options) : {};
  if (v.profile) options.profile = v.profile;
  const int = (s: string | undefined, dflt: number, name: string): number => {
    const n = s === undefined ? dflt : Number(s);
    if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${name} must be a positive integer`);
    return n;
  };
  const box = list(v.box)?.map(Number) ?? null;
  if (box && (box.length !== 2 || !(box[0] < box[1]))) throw new UsageError('--box needs lo,hi with lo < hi');
  return {
    methods,
    tasks,
    seeds: int(v.seeds, 15, 'seeds'),
    budget: int(v.budget, 153, 'budget'),
    batch: int(v.batch, 3, 'batch'),
    priorMean: v['prior-mean'] === undefined ? null : Number(v['prior-mean']),
    priorStd: v['prior-std'] === undefined ? null : Number(v['prior-std']),
    options,
    box: box ? [box[0], box[1]] : null,
    clip: v.clip ? true : v['no-clip'] ? false : null,
    workers: int(v.workers, 2, 'workers'),
    out: v.out ?? 'bench-results/paper',
    resume: v.resume === true,
  };
}

export class UsageError extends Error {}

/** Every (method, task, seed) job; seed s is the same across methods, so runs are paired. */
export function expandJobs(c: BenchConfig): RunSpec[] {
  const jobs: RunSpec[] = [];
  for (const { fn, dim } of c.tasks) {
    const bench = BENCH_TASKS[fn].make(dim);
    // A task with its own prior (CartPole, GP-mll) keeps it, its bounds as BO box and clipping,
    // unless the command line says otherwise; the test functions use the paper's N(−1, I), [−3, 3].
    const own = bench.prior && c.priorMean === null && c.priorStd === null ? bench.prior : null;
    const priorMean = own ? own.mean : Array(dim).fill(c.priorMean ?? -1);
    const priorStd = own ? own.std : Array(dim).fill(c.priorStd ?? 1);
    const box = c.box ? { lower: Array(dim).fill(c.box[0]), upper: Array(dim).fill(c.box[1]) } : own ? bench.bounds : { lower: Array(dim).fill(-3), upper: Array(dim).fill(3) };
    for (const method of c.methods) {
      for (let seed = 0; seed < c.seeds; seed++) {
        jobs.push({ method, fn, dim, seed, budget: c.budget, batch: c.batch, priorMean, priorStd, options: c.options, box, clip: c.clip ?? own !== null });
      }
    }
  }
  return jobs;
}
