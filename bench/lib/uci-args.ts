/**
 * Command-line options of bench/uci.ts and the jobs they expand to. Defaults: the seven methods the
 * paper compares, every shipped data set, the paper's 15 seeds, and the protocol of the paper's
 * test-function experiment for what its UCI section does not state (budget 153, batch q = 3).
 */
import { parseArgs } from 'node:util';
import type { MethodName, Options } from '../../src/engine/index.js';
import { UCI_DATASETS } from './uci-data.js';
import type { UciRunSpec } from './uci-run.js';

export const UCI_METHODS: MethodName[] = ['prob-cmaes', 'prob-xnes', 'prob-snes', 'cmaes', 'bo', 'pibo', 'random'];

export interface UciConfig {
  methods: MethodName[];
  datasets: string[];
  seeds: number;
  budget: number;
  batch: number;
  options: Options;
  workers: number;
  out: string;
  resume: boolean;
}

export const UCI_USAGE = `usage: npm run bench:uci -- [options]
  --methods a,b          methods (default: ${UCI_METHODS.join(',')})
  --datasets a,b         data sets (default: ${Object.keys(UCI_DATASETS).join(',')})
  --seeds 15 --budget 153 --batch 3
  --options '{"profile":"paper"}'   options, each passed to the methods that declare it
  --workers 1            worker threads
  --resume               keep the runs already in <out>/runs.jsonl, run only the missing ones
  --out bench-results/uci`;

export class UciUsageError extends Error {}

function list(s: string | undefined): string[] | null {
  return s ? s.split(',').map((t) => t.trim()).filter(Boolean) : null;
}

export function parseUciConfig(argv: string[], registered: readonly MethodName[], isMethod: (m: string) => m is MethodName): UciConfig {
  const { values: v } = parseArgs({
    args: argv,
    options: {
      methods: { type: 'string' }, datasets: { type: 'string' }, seeds: { type: 'string' }, budget: { type: 'string' }, batch: { type: 'string' },
      options: { type: 'string' }, workers: { type: 'string' }, out: { type: 'string' }, resume: { type: 'boolean' }, help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (v.help) throw new UciUsageError(UCI_USAGE);
  const methods = (list(v.methods) ?? UCI_METHODS).map((m) => {
    if (!isMethod(m) || !registered.includes(m)) throw new UciUsageError(`unknown or unregistered method ${m}; registered: ${registered.join(', ')}`);
    return m;
  });
  const datasets = list(v.datasets) ?? Object.keys(UCI_DATASETS);
  for (const d of datasets) if (!UCI_DATASETS[d]) throw new UciUsageError(`unknown data set ${d}; known: ${Object.keys(UCI_DATASETS).join(', ')}`);
  const int = (s: string | undefined, dflt: number, name: string): number => {
    const n = s === undefined ? dflt : Number(s);
    if (!Number.isInteger(n) || n < 1) throw new UciUsageError(`--${name} must be a positive integer`);
    return n;
  };
  let options: Options = {};
  if (v.options) {
    try {
      options = JSON.parse(v.options) as Options;
    } catch {
      throw new UciUsageError('--options must be a JSON object');
    }
  }
  return {
    methods,
    datasets,
    seeds: int(v.seeds, 15, 'seeds'),
    budget: int(v.budget, 153, 'budget'),
    batch: int(v.batch, 3, 'batch'),
    options,
    workers: int(v.workers, 1, 'workers'),
    out: v.out ?? 'bench-results/uci',
    resume: v.resume === true,
  };
}

/** Every (data set, method, seed) job; seed s is the same across methods, so runs are paired. */
export function uciJobs(c: UciConfig): UciRunSpec[] {
  return c.datasets.flatMap((dataset) =>
    c.methods.flatMap((method) => Array.from({ length: c.seeds }, (_, seed) => ({ method, dataset, seed, budget: c.budget, batch: c.batch, options: c.options }))),
  );
}
