/**
 * In-process lab for several objectives (ALGORITHM.md §32): the init/ask/tell loop of a method over a
 * multi-objective benchmark (src/engine/benchmarks/multi.ts), as the service drives it: the default
 * prior of a bounded parameter (mean the middle, std a quarter of the width, so the box is u ∈ [−2, 2]),
 * points projected onto the bounds and the projected point told, the study's declared budget
 * (max_trials = the largest checkpoint) and its batch size (default 3, the API's). After each
 * checkpoint (20·d, 50·d, 100·d evaluations by default) it records the hypervolume of the feasible
 * front (src/engine/multi/hypervolume.ts) against the task's reference point: ZDT (11, 11) and DTLZ2
 * (1.1, …, 1.1) as BoTorch's test problems declare them, the truss its own (0.06, 1.1e5).
 *
 * One problem exists here only: `zdt1fail`, ZDT1 whose evaluation is impossible (reported infeasible,
 * no value) where x_1 > 0.6, a large region where evaluation fails (ALGORITHM.md §32.4); its hv_true is
 * ZDT1's, which the part of the front with x_1 ≤ 0.6 does not reach. Each record counts the infeasible
 * evaluations up to each checkpoint.
 *
 *   nice -n 10 npx tsx bench/multi-engine.ts --methods prob-cmaes,random --problems zdt1:4,dtlz2:6 --seeds 0-9 [--out runs.jsonl]
 *
 * Options: --mults 20,50,100 (checkpoints as multiples of d); --batch 3; --options '{"k":v}' (passed to
 * every method that declares the key, bench options included); --tag label. One JSON line per run to
 * --out (appended) and a median table on stdout.
 */
import { appendFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { getMultiBenchmark, type MultiBenchmark } from '../src/engine/benchmarks/multi.js';
import { hypervolume } from '../src/engine/multi/hypervolume.js';
import { Rng } from '../src/engine/random/index.js';
import { getStrategy, resolveOptions, STRATEGIES, type MethodName } from '../src/engine/strategies/registry.js';
import { generationSize, type Observation } from '../src/engine/strategies/types.js';
import type { Options } from '../src/engine/strategies/options.js';

export interface MultiRunSpec {
  method: MethodName;
  problem: string;
  dim: number;
  objectives?: number;
  seed: number;
  batch: number;
  checkpoints: number[];
  options: Options;
}

export interface MultiRunRecord {
  method: MethodName;
  problem: string;
  dim: number;
  seed: number;
  batch: number;
  checkpoints: number[];
  hv: number[];
  /** Infeasible evaluations (no value) up to each checkpoint. */
  infeasible: number[];
  /** HV of the true front for the same reference point. */
  hv_true: number;
  seconds: number;
  tag?: string;
}

const BOTORCH_REF: Record<string, (m: number) => number[]> = {
  zdt1: () => [11, 11],
  zdt1fail: () => [11, 11],
  zdt2: () => [11, 11],
  zdt3: () => [11, 11],
  dtlz2: (m) => Array<number>(m).fill(1.1),
};

/** x_1 above which `zdt1fail` cannot be evaluated (x_1 ∈ [0, 1]). */
export const ZDT1_FAIL_ABOVE = 0.6;

/** A task by name: the registry's, or the lab's own `zdt1fail`. */
function benchmark(name: string, d: number, objectives?: number): MultiBenchmark {
  if (name !== 'zdt1fail') return getMultiBenchmark(name, d, objectives);
  const b = getMultiBenchmark('zdt1', d, objectives);
  return { ...b, name, evaluate: (x) => (x[0] > ZDT1_FAIL_ABOVE ? { f: [NaN, NaN], c: [] } : b.evaluate(x)) };
}

export function referencePoint(b: MultiBenchmark): number[] {
  return BOTORCH_REF[b.name]?.(b.objectives) ?? b.referencePoint;
}

function optionsFor(method: MethodName, given: Options): Options {
  const known = { ...STRATEGIES[method].options, ...STRATEGIES[method].benchOptions };
  return Object.fromEntries(Object.entries(given).filter(([k]) => k in known));
}

/** The feasible evaluations' hypervolume against r. */
export function frontHypervolume(history: readonly Observation[], r: number[]): number {
  const pts = history.filter((o) => !o.infeasible && (o.c ?? []).every((v) => v <= 0)).map((o) => o.f!);
  return pts.length === 0 ? 0 : hypervolume(pts, r);
}

export function runMulti(spec: MultiRunSpec): MultiRunRecord {
  const t0 = performance.now();
  const b = benchmark(spec.problem, spec.dim, spec.objectives);
  const d = b.dim;
  const r = referencePoint(b);
  const lo = b.bounds.lower, hi = b.bounds.upper;
  const mid = lo.map((v, i) => (v + hi[i]) / 2);
  const sd = lo.map((v, i) => (hi[i] - v) / 4);
  const strategy = getStrategy(spec.method);
  const options = resolveOptions(spec.method, d, optionsFor(spec.method, spec.options));
  const budget = Math.max(...spec.checkpoints);
  const usesBox = strategy.usesBox;
  const box = usesBox ? { lower: lo.map((v, i) => (v - mid[i]) / sd[i]), upper: hi.map((v, i) => (v - mid[i]) / sd[i]) } : null;
  let state = strategy.init(
    { dim: d, batchSize: spec.batch, options, box, budget, outcomes: { objectives: b.objectives, constraints: b.constraints, reference: r } },
    Rng.fromSeed(spec.seed),
  );
  const history: Observation[] = [];
  const hv: number[] = [];
  const infeasible: number[] = [];
  let next = 0;
  const checkpoints = [...spec.checkpoints].sort((a, c) => a - c);
  while (history.length < budget) {
    const count = Math.min(generationSize(state), budget - history.length);
    const asked = strategy.ask(state, { history, pending: [] }, count);
    state = asked.state;
    const batch: Observation[] = asked.points.map((u) => {
      const x = u.map((v, i) => Math.min(hi[i], Math.max(lo[i], mid[i] + sd[i] * v)));
      const told = x.map((v, i) => (v - mid[i]) / sd[i]);
      const same = told.every((v, i) => Math.abs(v - u[i]) < 1e-12);
      const { f, c } = b.evaluate(x);
      if (![...f, ...c].every(Number.isFinite)) return { x: same ? u : told, y: 0, infeasible: true as const };
      return { x: same ? u : told, y: f[0], f, ...(c.length > 0 ? { c } : {}) };
    });
    history.push(...batch);
    state = strategy.tell(state, { batch, history: [...history] });
    while (next < checkpoints.length && history.length >= checkpoints[next]) {
      hv.push(frontHypervolume(history.slice(0, checkpoints[next]), r));
      infeasible.push(history.slice(0, checkpoints[next]).filter((o) => o.infeasible).length);
      next++;
    }
  }
  return { method: spec.method, problem: `${b.name}${b.objectives > 2 ? `-m${b.objectives}` : ''}`, dim: d, seed: spec.seed, batch: spec.batch, checkpoints, hv, infeasible, hv_true: b.frontHypervolume(r), seconds: (performance.now() - t0) / 1000 };
}

function parseList(s: string): number[] {
  return s.split(',').flatMap((part) => {
    const m = /^(\d+)-(\d+)$/.exec(part);
    if (!m) return [Number(part)];
    const out: number[] = [];
    for (let i = Number(m[1]); i <= Number(m[2]); i++) out.push(i);
    return out;
  });
}

function median(v: number[]): number {
  const s = [...v].sort((a, b) => a - b);
  const k = s.length >> 1;
  return s.length % 2 ? s[k] : (s[k - 1] + s[k]) / 2;
}

function main(): void {
  const args = new Map<string, string>();
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) args.set(argv[i].replace(/^--/, ''), argv[i + 1]);
  const methods = (args.get('methods') ?? 'prob-cmaes,random').split(',') as MethodName[];
  const problems = (args.get('problems') ?? 'zdt1:4').split(',');
  const seeds = parseList(args.get('seeds') ?? '0-4');
  const mults = parseList(args.get('mults') ?? '20,50,100');
  const batch = Number(args.get('batch') ?? 3);
  const options = JSON.parse(args.get('options') ?? '{}') as Options;
  const out = args.get('out');
  const tag = args.get('tag');
  console.log(`# load ${loadavg().map((v) => v.toFixed(1)).join(' ')}; batch ${batch}; options ${JSON.stringify(options)}${tag ? `; tag ${tag}` : ''}`);
  for (const p of problems) {
    const [name, dimS, mS] = p.split(':');
    const dim = Number(dimS);
    for (const method of methods) {
      const recs: MultiRunRecord[] = [];
      for (const seed of seeds) {
        const rec = runMulti({ method, problem: name, dim, objectives: mS ? Number(mS) : undefined, seed, batch, checkpoints: mults.map((k) => k * dim), options });
        if (tag) rec.tag = tag;
        recs.push(rec);
        if (out) appendFileSync(out, `${JSON.stringify(rec)}\n`);
      }
      const failed = recs.some((x) => x.infeasible.at(-1)! > 0);
      const cols = mults.map((k, i) => `${k}d ${median(recs.map((x) => x.hv[i])).toFixed(4)}${failed ? ` (infeasible ${median(recs.map((x) => x.infeasible[i]))})` : ''}`).join(' | ');
      console.log(`${recs[0].problem} d=${dim} ${method}${tag ? ` [${tag}]` : ''}: ${cols} | true ${recs[0].hv_true.toFixed(4)} | ${median(recs.map((x) => x.seconds)).toFixed(1)} s/run`);
    }
  }
}

if (process.argv[1]?.endsWith('multi-engine.ts')) main();
