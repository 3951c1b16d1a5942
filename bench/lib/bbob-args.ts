/**
 * Command line of bench/bbob.ts and the runs it expands to: every (method variant, function,
 * dimension, instance), each run to the largest budget, through the same RunSpec as bench:paper.
 *
 * The protocol of the field's BBOB comparisons as a service user meets it: x in [−5, 5]^d (the BO
 * box, and points are projected onto it as the service projects onto parameter bounds), prior
 * N(0, 2²I), one generation per ask, each method at its own default population (defaultPopulation).
 */
import { parseArgs } from 'node:util';
import { BBOB_FUNCTIONS } from '../../src/engine/benchmarks/bbob.js';
import { isMethodName, resolveOptions, STRATEGIES, type MethodName, type Options } from '../../src/engine/index.js';
import { registeredMethods } from '../../src/engine/strategies/registry.js';
import { UsageError } from './args.js';
import { isPeer, PEER_XTOL_REL, PEERS, type PeerName, type PeerRunSpec } from './bbob-peers.js';
import { declaredOptions, optionsFor, type RunSpec } from './run.js';
import { startPhaseLength } from '../../src/engine/strategies/probnes-params.js';

/**
 * A method with its own options: `prob-cmaes:paper` is prob-cmaes with profile paper. `bobyqa` and
 * `newuoa` are external peers (bench/lib/bbob-peers.ts), run by NLopt, never methods of the service.
 */
export interface Variant {
  label: string;
  method: MethodName | PeerName;
  options: Options;
}

export interface BbobConfig {
  variants: Variant[];
  dims: number[];
  functions: number[];
  instances: number[];
  /** Budgets as multiples of d, ascending; each run goes to the largest. */
  budgetPerDim: number[];
  /** Fixed population for every method, or null: each method's default (defaultPopulation). */
  batch: number | null;
  workers: number;
  out: string;
  resume: boolean;
  /** Run nothing: report the finished runs already in <out>/runs.jsonl (cells without runs show –). */
  reportOnly: boolean;
  /**
   * A variant whose method reads the declared budget (ProbNES) also runs once per budget B with the
   * study's max_trials = B (label `<label>@<k>d`), as a user who declares it; every variant runs once to
   * the largest budget with none.
   */
  declareBudget: boolean;
  /** With declareBudget: only the declared runs of the methods that read the budget (no run without one). */
  declaredOnly: boolean;
}

export const BBOB_USAGE = `usage: npm run bench:bbob -- [options]
  --methods a,b:profile     method variants (default: every registered method); m:paper = m with profile paper;
                            bobyqa, newuoa: Powell's methods through NLopt (/usr/bin/python3 with python3-nlopt)
  --profile paper           profile for every method that has one (a variant's own profile wins)
  --options '{"k":v}'       options, each passed to the methods that declare it
  --dims 2,5,10,20          dimensions (default 2,5,10)
  --functions 1-24          BBOB functions, ranges and lists (default 1-24)
  --instances 1-5           instances (default 1-5)
  --budget-per-dim 2,5,50   budgets in evaluations per dimension (default 2,5,10,20,50); runs go to the largest
  --batch q                 one population for every method (default: each method's own, see docs/BENCHMARKS.md, BBOB)
  --workers 1               worker threads
  --resume                  keep the runs already in <out>/runs.jsonl, run only the missing ones
  --report-only             run nothing; report the runs in <out>/runs.jsonl that the options select
  --declare-budget          run each service variant once per budget B with max_trials = B (label <variant>@<k>d)
  --declared-only           with --declare-budget: no run without a declared budget for those variants
  --out bench-results/bbob`;

/** "1-3,7" → [1, 2, 3, 7]. */
export function parseRange(s: string, what: string): number[] {
  const out: number[] = [];
  for (const part of s.split(',').map((t) => t.trim()).filter(Boolean)) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!m) throw new UsageError(`--${what}: cannot read ${JSON.stringify(part)} (use e.g. 1-5,7)`);
    const lo = Number(m[1]), hi = Number(m[2] ?? m[1]);
    if (hi < lo) throw new UsageError(`--${what}: empty range ${part}`);
    for (let k = lo; k <= hi; k++) if (!out.includes(k)) out.push(k);
  }
  if (out.length === 0) throw new UsageError(`--${what}: nothing given`);
  return out;
}

/**
 * The population a user gets from each method's own default: Hansen's λ = 4 + ⌊3 ln d⌋ for the
 * evolution strategies (CMA-ES, xNES, SNES and the CMA-ES variants), whose strategy parameters are
 * tuned for it; the service's default batch_size 3 for the others (ProbNES, BO, πBO, random), which
 * have no population of their own (the engine takes λ from the study's batch_size).
 */
export function defaultPopulation(method: string, d: number): number {
  return ['cmaes', 'xnes', 'snes', 'lq-cmaes'].includes(method) ? 4 + Math.floor(3 * Math.log(d)) : 3;
}

/** Rejects an option the method declares with a value outside its spec (unknown options are simply not passed). */
function checkOptions(method: MethodName, options: Options, label: string): void {
  for (const [key, value] of Object.entries(options)) {
    const spec = declaredOptions(method)[key];
    if (!spec) continue;
    const bad =
      spec.kind === 'enum' ? !spec.values.includes(String(value))
      : spec.kind === 'boolean' ? typeof value !== 'boolean'
      : typeof value !== 'number' || !(value >= spec.min && value <= spec.max) || (spec.integer === true && !Number.isInteger(value));
    if (bad) throw new UsageError(`${label}: option ${key} = ${JSON.stringify(value)} is not allowed (${spec.description})`);
  }
}

function parseVariant(spec: string, common: Options): Variant {
  const [name, profile, ...rest] = spec.split(':');
  if (rest.length > 0) throw new UsageError(`--methods: ${spec}: use method or method:profile`);
  if (isPeer(name)) {
    if (profile) throw new UsageError(`--methods: ${name} is an external peer and has no profiles`);
    return { label: spec, method: name, options: peerOptions(name) };
  }
  if (!isMethodName(name) || !registeredMethods().includes(name)) throw new UsageError(`unknown or unregistered method ${name}; registered: ${registeredMethods().join(', ')}; external peers: ${PEERS.join(', ')}`);
  const options = optionsFor(name, { ...common, ...(profile ? { profile } : {}) });
  if (profile && !('profile' in STRATEGIES[name].options)) throw new UsageError(`--methods: ${name} has no profiles`);
  checkOptions(name, options, spec);
  return { label: spec, method: name, options };
}

export function parseBbobConfig(argv: string[]): BbobConfig {
  const { values: v } = parseArgs({
    args: argv,
    options: {
      methods: { type: 'string' }, profile: { type: 'string' }, options: { type: 'string' }, dims: { type: 'string' },
      functions: { type: 'string' }, instances: { type: 'string' }, 'budget-per-dim': { type: 'string' }, batch: { type: 'string' },
      workers: { type: 'string' }, resume: { type: 'boolean' }, 'report-only': { type: 'boolean' }, 'declare-budget': { type: 'boolean' }, 'declared-only': { type: 'boolean' }, out: { type: 'string' }, help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (v.help) throw new UsageError(BBOB_USAGE);
  let common: Options;
  try {
    common = v.options ? (JSON.parse(v.options) as Options) : {};
  } catch {
    throw new UsageError('--options must be a JSON object');
  }
  if (v.profile) common.profile = v.profile;
  const variants = (v.methods ? v.methods.split(',').map((t) => t.trim()).filter(Boolean) : registeredMethods()).map((m) => parseVariant(m, common));
  if (new Set(variants.map((x) => x.label)).size !== variants.length) throw new UsageError('--methods: a variant is listed twice');
  const functions = parseRange(v.functions ?? `1-${BBOB_FUNCTIONS}`, 'functions');
  if (functions.some((f) => f > BBOB_FUNCTIONS || f < 1)) throw new UsageError(`--functions: BBOB has f1…f${BBOB_FUNCTIONS}`);
  const dims = parseRange(v.dims ?? '2,5,10', 'dims');
  if (dims.some((d) => d < 2)) throw new UsageError('--dims: BBOB functions need d ≥ 2');
  const instances = parseRange(v.instances ?? '1-5', 'instances');
  if (instances.includes(0)) throw new UsageError('--instances: instances start at 1');
  const budgetPerDim = [...new Set(parseRange(v['budget-per-dim'] ?? '2,5,10,20,50', 'budget-per-dim'))].sort((a, b) => a - b);
  if (budgetPerDim.includes(0)) throw new UsageError('--budget-per-dim: budgets must be positive');
  const int = (s: string | undefined, name: string): number | null => {
    if (s === undefined) return null;
    const n = Number(s);
    if (!Number.isInteger(n) || n < 1) throw new UsageError(`--${name} must be a positive integer`);
    return n;
  };
  return {
    variants, dims, functions, instances, budgetPerDim,
    batch: int(v.batch, 'batch'),
    workers: int(v.workers, 'workers') ?? 1,
    out: v.out ?? 'bench-results/bbob',
    resume: v.resume === true || v['report-only'] === true,
    reportOnly: v['report-only'] === true,
    declareBudget: v['declare-budget'] === true,
    declaredOnly: v['declared-only'] === true,
  };
}

/** The settings a peer runs with, recorded as its options in runs.jsonl. */
function peerOptions(peer: PeerName): Options {
  return { algorithm: peer === 'bobyqa' ? 'LN_BOBYQA' : 'LN_NEWUOA', xtol_rel: PEER_XTOL_REL, restart: 'N(x0, σ²I) after convergence' };
}

/**
 * One run: the RunSpec a worker executes (service methods) or the PeerRunSpec the NLopt runner
 * executes (external peers), and what the report needs to know about it.
 */
export interface BbobJob {
  variant: Variant;
  fn: number;
  dim: number;
  instance: number;
  budget: number;
  spec: RunSpec | null;
  peer: PeerRunSpec | null;
  /** The options the method runs with, defaults filled in (resolveOptions). */
  effectiveOptions: Options;
}

/** The strategy's seed is the instance, so method variants are paired on the same instance and seed. */
export function expandBbobJobs(c: BbobConfig): BbobJob[] {
  const jobs: BbobJob[] = [];
  const budget = (d: number) => c.budgetPerDim[c.budgetPerDim.length - 1] * d;
  for (const dim of c.dims) {
    for (const fn of c.functions) {
      for (const variant of c.variants) {
        for (const instance of c.instances) {
          const box = { lower: Array<number>(dim).fill(-5), upper: Array<number>(dim).fill(5) };
          if (isPeer(variant.method)) {
            // The same protocol: start at the prior's mean 0, initial step its σ = 2, the box [−5, 5]^d.
            const peer: PeerRunSpec = { peer: variant.method, fn, dim, instance, budget: budget(dim), priorMean: Array<number>(dim).fill(0), priorStd: 2, box, tag: variant.label };
            jobs.push({ variant, fn, dim, instance, budget: budget(dim), spec: null, peer, effectiveOptions: variant.options });
            continue;
          }
          // With --declare-budget a method that reads the declared budget (the ProbNES start phase) also
          // runs once per budget B = k·d with max_trials = B, beside its run with none.
          const undeclared = { label: variant.label, b: budget(dim), maxTrials: null as number | null };
          const readsBudget = 'start_phase' in STRATEGIES[variant.method].options;
          // A declared budget whose phase is the undeclared run's, at the largest budget, is that run: not run twice.
          const same = (k: number) => !c.declaredOnly && k === c.budgetPerDim[c.budgetPerDim.length - 1] && startPhaseLength(dim, k * dim) === startPhaseLength(dim, null);
          const perBudget = c.budgetPerDim.filter((k) => !same(k)).map((k) => ({ label: `${variant.label}@${k}d`, b: k * dim, maxTrials: k * dim as number | null }));
          const declared = c.declareBudget && readsBudget ? [...(c.declaredOnly ? [] : [undeclared]), ...perBudget] : [undeclared];
          for (const { label, b, maxTrials } of declared) {
            const spec: RunSpec = {
              method: variant.method, fn: `bbob-f${fn}`, dim, seed: instance, instance, tag: label,
              budget: b, batch: c.batch ?? defaultPopulation(variant.method, dim),
              priorMean: Array(dim).fill(0), priorStd: Array(dim).fill(2),
              options: variant.options, box, clip: true, maxTrials,
            };
            jobs.push({ variant: { ...variant, label }, fn, dim, instance, budget: b, spec, peer: null, effectiveOptions: resolveOptions(variant.method, dim, variant.options) });
          }
        }
      }
    }
  }
  return jobs;
}

export function jobKey(j: { variant: string; fn: number; dim: number; instance: number; budget: number }): string {
  return `${j.variant}/f${j.fn}/${j.dim}/${j.instance}/${j.budget}`;
}
