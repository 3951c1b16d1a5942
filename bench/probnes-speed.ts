/**
 * Per-generation wall time of the ProbNES loop with a breakdown (GP fit, gradient + update,
 * acquisition), at a fixed number of active points; and a trajectory recorder that proves a speed
 * change did not change results.
 *
 *   npx tsx bench/probnes-speed.ts [--dims 2,10,30] [--n 150] [--q 3] [--reps 15] [--candidates 1000]
 *   npx tsx bench/probnes-speed.ts --record FILE [--gens 20] [--seeds 1,2,3]
 *   npx tsx bench/probnes-speed.ts --check FILE [--tol 1e-9] [--profiles paper]
 *   npx tsx bench/probnes-speed.ts --detail [--dims 10,30]     where the time goes (CPU ms)
 *
 * Timing setting: n points drawn from ν = N(0, I) (all inside the active set), y = Ackley-like
 * values, a warm start from the MAP fit on the first n − q points (the default profile's situation).
 * One "generation" = active set + standardise + fit + gradient + update (tell) + batch BQ (ask).
 * Wall times are medians; "CPU" is the median process CPU time of the whole generation, which the
 * load of other processes on a shared machine inflates much less than the wall time.
 *
 * --detail: in the same setting, the fit's evaluation counts (objective values and gradients over
 * both starts) and the CPU cost of one evaluation's parts (kernel matrix, Cholesky, K⁻¹, trace
 * terms), and the ask's parts (candidate draws, active-set preparation, the candidates' kernel
 * rows + triangular solves, and the whole selection including the scoring of the M batches).
 *
 * Trajectories: prob-cmaes, prob-xnes, prob-snes in both profiles on Branin (d = 2) and Ackley
 * (d = 2 and 5), prior N(−1, I) as in ALGORITHM.md §7, q = 3, `--gens` generations after the first
 * batch, driven through the strategy contract in-process. Every point handed out, every value and
 * the final (μ, Σ) are written; --check reruns the same runs and reports the largest relative
 * difference of the points and of (μ, Σ), failing (exit 1) above --tol.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { getBenchmark } from '../src/engine/benchmarks/index.js';
import { resolveOptions, type MethodName } from '../src/engine/index.js';
import { Rng } from '../src/engine/random/index.js';
import { getStrategy } from '../src/engine/strategies/registry.js';
import type { Observation } from '../src/engine/strategies/types.js';
import { activeSet, standardise } from '../src/engine/strategies/probnes-data.js';
import { drawCandidateBatchesStacked, expectedGradientRows, fitModel, sampleFrom, selectBatch } from '../src/engine/strategies/probnes-bq.js';
import { fitGp, mapObjectiveEvaluator, packHyper, probnesPriors, toMat } from '../src/engine/gp/index.js';
import { kernelMatrixInto } from '../src/engine/gp/kernel.js';
import { choleskyInto, cholInverseSymInto, cholSolve } from '../src/engine/linalg/index.js';
import { prepareBatchSelection } from '../src/engine/quadrature/index.js';
import { candidateTerms } from '../src/engine/quadrature/candidates.js';
import { kernelMeansFor, prepareKernelMeasure } from '../src/engine/quadrature/measure.js';
import { updateCovCmaes, updateCovSnes, updateCovXnes, updateMean } from '../src/engine/strategies/probnes-updates.js';

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : dflt;
}
const has = (name: string) => process.argv.includes(`--${name}`);

const ackley = (x: number[]) => {
  const d = x.length;
  const a = Math.sqrt(x.reduce((s, v) => s + v * v, 0) / d);
  const b = x.reduce((s, v) => s + Math.cos(2 * Math.PI * v), 0) / d;
  return -20 * Math.exp(-0.2 * a) - Math.exp(b) + 20 + Math.E;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function timing(): void {
  const dims = arg('dims', '2,10,30').split(',').map(Number);
  const n = Number(arg('n', '150'));
  const q = Number(arg('q', '3'));
  const reps = Number(arg('reps', '15'));
  const M = Number(arg('candidates', '1000'));
  console.log(`ProbNES per-generation time, n = ${n} active points, q = ${q}, M = ${M} candidate batches, ${reps} reps (median ms)`);
  console.log('| d | total | active set + standardise | GP fit (2 starts) | gradient + update | batch-BQ ask | total CPU |');
  console.log('|---|---|---|---|---|---|---|');
  const perMethod: string[] = [];
  for (const d of dims) {
    const rows: number[][] = [];
    for (let r = 0; r < reps; r++) {
      const rng = Rng.fromSeed(100 + r);
      const mean = new Array(d).fill(0);
      const cov = Array.from({ length: d }, (_, i) => Array.from({ length: d }, (_, j) => (i === j ? 1 : 0)));
      const history = sampleFrom(mean, cov, n, rng).map((x) => ({ x, y: ackley(x) }));
      const prevSt = standardise(history.slice(0, n - q).map((o) => o.y));
      const warm = fitModel(history.slice(0, n - q).map((o) => o.x), prevSt.yTilde.map((v) => -v), { warmStart: null, restarts: 0, rng }).model.hyper;
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const idx = activeSet(history, mean, cov, { enabled: true, quantile: 0.9973, minSize: q });
      const st = standardise(idx.map((j) => history[j].y));
      const t1 = performance.now();
      const fit = fitModel(idx.map((j) => history[j].x), st.yTilde.map((v) => -v), { warmStart: warm, restarts: 0, rng });
      const t2 = performance.now();
      const g = expectedGradientRows(fit.model, mean, cov);
      const mean2 = updateMean(mean, cov, g.gMean, 1);
      const cov2 = updateCovCmaes(cov, g.gCov, 0.5);
      const t3 = performance.now();
      selectBatch(fit.model, mean2, cov2, [mean2], q - 1, M, rng);
      const t4 = performance.now();
      const c = process.cpuUsage(c0);
      // The three methods differ only in the covariance update (ALGORITHM.md §4): timed apart, outside
      // the total, each as the mean of 50 calls on this generation's gradient.
      const per = (fn: () => void) => {
        const s0 = performance.now();
        for (let i = 0; i < 50; i++) fn();
        return (performance.now() - s0) / 50;
      };
      rows.push([
        t4 - t0, t1 - t0, t2 - t1, t3 - t2, t4 - t3, (c.user + c.system) / 1000,
        per(() => updateCovCmaes(cov, g.gCov, 0.5)),
        per(() => updateCovXnes(cov, g.gCov, 0.5)),
        per(() => updateCovSnes(cov, g.gCov, 1, 'natural')),
      ]);
    }
    const med = [0, 1, 2, 3, 4, 5].map((k) => median(rows.map((r) => r[k])).toFixed(1));
    console.log(`| ${d} | ${med.join(' | ')} |`);
    perMethod.push(`| ${d} | ${[6, 7, 8].map((k) => median(rows.map((r) => r[k])).toFixed(3)).join(' | ')} |`);
  }
  console.log('\nCovariance update alone, per method (median ms; the rest of a generation is shared by the three)');
  console.log('| d | Prob-CMAES | Prob-XNES (expm) | Prob-SNES (natural) |');
  console.log('|---|---|---|---|');
  for (const line of perMethod) console.log(line);
}

/** Median CPU ms of one call of fn over `reps` timed rounds of `inner` calls, after one warm-up call. */
function cpuMs(fn: () => void, reps = 7, inner = 1): number {
  fn();
  const xs: number[] = [];
  for (let r = 0; r < reps; r++) {
    const c0 = process.cpuUsage();
    for (let i = 0; i < inner; i++) fn();
    const c = process.cpuUsage(c0);
    xs.push((c.user + c.system) / 1000 / inner);
  }
  return median(xs);
}

function detail(): void {
  const dims = arg('dims', '10,30').split(',').map(Number);
  const n = Number(arg('n', '150'));
  const q = Number(arg('q', '3'));
  const M = Number(arg('candidates', '1000'));
  console.log(`Where the time goes (median CPU ms), n = ${n}, q = ${q}, M = ${M}; the fit as in the timing table (default + warm start)`);
  console.log('| d | fit: values / gradients | kernel K | Cholesky | K⁻¹ | trace terms | ⇒ fit ≈ | ask: draws | prepare | kernel rows + solves | whole selection |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const d of dims) {
    const rng = Rng.fromSeed(100);
    const mean = new Array(d).fill(0);
    const cov = Array.from({ length: d }, (_, i) => Array.from({ length: d }, (_, j) => (i === j ? 1 : 0)));
    const history = sampleFrom(mean, cov, n, rng).map((x) => ({ x, y: ackley(x) }));
    const prevSt = standardise(history.slice(0, n - q).map((o) => o.y));
    const warm = fitModel(history.slice(0, n - q).map((o) => o.x), prevSt.yTilde.map((v) => -v), { warmStart: null, restarts: 0, rng }).model.hyper;
    const st = standardise(history.map((o) => o.y));
    const X = toMat(history.map((o) => o.x));
    const z = st.yTilde.map((v) => -v);
    const fit = fitGp(X, z, { priors: probnesPriors(d), warmStart: warm });
    const { values, gradients } = fit.evaluations;
    const h = fit.model.hyper;
    const nn = n * n, K = new Float64Array(nn), L = new Float64Array(nn), Kinv = new Float64Array(nn), U = new Float64Array(nn);
    const tK = cpuMs(() => kernelMatrixInto(X, h, K), 7, 10);
    const tL = cpuMs(() => choleskyInto(K, n, L, U), 7, 10);
    const tI = cpuMs(() => cholInverseSymInto(L, n, Kinv, U), 7, 10);
    const ev = mapObjectiveEvaluator(X, z, probnesPriors(d));
    const phi = packHyper(h);
    ev.value(phi);
    // The trace terms are the gradient minus its K⁻¹ (a difference of two timings: rough under load).
    const tG = Math.max(cpuMs(() => ev.gradient(), 7, 10) - tI, 0);
    const fitEst = values * (tK + tL) + gradients * (tI + tG);
    const size = q - 1;
    const tDraw = cpuMs(() => drawCandidateBatchesStacked(mean, cov, size, M, Rng.fromSeed(1)), 5);
    const tPrep = cpuMs(() => prepareBatchSelection(fit.model, mean, cov, [mean]), 5);
    const P = drawCandidateBatchesStacked(mean, cov, size, M, Rng.fromSeed(1));
    const sel = prepareBatchSelection(fit.model, mean, cov, [mean]);
    // The candidates' terms against the active set (here without the pending point: same cost ±1 row).
    const measure = prepareKernelMeasure(h, mean, cov);
    const v = cholSolve(fit.model.L, kernelMeansFor(measure, X));
    const tTerms = cpuMs(() => candidateTerms(X, fit.model.L, v, h, measure, P), 5);
    // Rows + solves + the q×q scoring of every batch; the scoring alone is below the timer's noise.
    const tSelect = cpuMs(() => sel.selectBestStacked(P, size), 5);
    const f = (x: number) => x.toFixed(2);
    console.log(`| ${d} | ${values} / ${gradients} | ${f(tK)} | ${f(tL)} | ${f(tI)} | ${f(tG)} | ${fitEst.toFixed(1)} | ${f(tDraw)} | ${f(tPrep)} | ${f(tTerms)} | ${f(tSelect)} |`);
  }
}

interface Trajectory {
  key: string;
  points: number[][];
  values: number[];
  mean: number[];
  cov: number[][];
}

const TASKS: { fn: string; d: number }[] = [
  { fn: 'branin', d: 2 },
  { fn: 'ackley', d: 2 },
  { fn: 'ackley', d: 5 },
];
const METHODS: MethodName[] = ['prob-cmaes', 'prob-xnes', 'prob-snes'];

/** One run through the strategy contract: prior N(−1, I), q = 3, the first batch plus `gens` generations. */
function trajectory(method: MethodName, profile: string, fn: string, d: number, seed: number, gens: number): Trajectory {
  const bench = getBenchmark(fn, d);
  const q = 3;
  const strategy = getStrategy(method);
  const options = resolveOptions(method, d, { profile });
  let state = strategy.init({ dim: d, batchSize: q, options, box: null }, Rng.fromSeed(seed));
  const history: Observation[] = [];
  const points: number[][] = [];
  const values: number[] = [];
  for (let g = 0; g <= gens; g++) {
    const asked = strategy.ask(state, { history, pending: [] }, q);
    state = asked.state;
    const batch = asked.points.map((u) => {
      const y = bench.f(u.map((v) => v - 1));
      points.push([...u]);
      values.push(y);
      return { x: [...u], y };
    });
    history.push(...batch);
    state = strategy.tell(state, { batch, history: [...history] });
  }
  return { key: `${method}/${profile}/${fn}-${d}/seed${seed}`, points, values, mean: [...state.mean], cov: state.cov.map((r) => [...r]) };
}

/** --profiles (default both): `--check FILE --profiles paper` compares only the paper profile's runs. */
function profilesArg(): string[] {
  return arg('profiles', 'default,paper').split(',');
}

function allTrajectories(): Trajectory[] {
  const gens = Number(arg('gens', '20'));
  const seeds = arg('seeds', '1,2,3').split(',').map(Number);
  const out: Trajectory[] = [];
  for (const method of METHODS) {
    for (const profile of profilesArg()) {
      for (const t of TASKS) for (const seed of seeds) out.push(trajectory(method, profile, t.fn, t.d, seed, gens));
    }
  }
  return out;
}

/** Largest |a − b| / max(|a|, |b|, 1e-300) over paired entries (Infinity on a shape mismatch). */
function maxRel(a: number[], b: number[]): number {
  if (a.length !== b.length) return Infinity;
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    if (a[i] === b[i]) continue;
    m = Math.max(m, Math.abs(a[i] - b[i]) / Math.max(Math.abs(a[i]), Math.abs(b[i]), 1e-300));
  }
  return m;
}

function check(file: string): void {
  const tol = Number(arg('tol', '1e-9'));
  const before = JSON.parse(readFileSync(file, 'utf8')) as Trajectory[];
  const t0 = performance.now();
  const now = allTrajectories();
  const ms = performance.now() - t0;
  let worst = 0, identical = 0;
  const profiles = profilesArg();
  for (const b of before.filter((t) => profiles.includes(t.key.split('/')[1]))) {
    const a = now.find((t) => t.key === b.key);
    if (!a) throw new Error(`run ${b.key} missing`);
    const rel = Math.max(maxRel(a.points.flat(), b.points.flat()), maxRel(a.mean, b.mean), maxRel(a.cov.flat(), b.cov.flat()));
    if (rel === 0) identical++;
    else console.log(`${b.key}: largest relative difference ${rel.toExponential(2)}`);
    worst = Math.max(worst, rel);
  }
  console.log(`${now.length} runs, ${identical} bit-identical, largest relative difference ${worst.toExponential(2)} (tolerance ${tol}); ${ms.toFixed(0)} ms`);
  if (!(worst <= tol)) process.exit(1);
}

if (has('record')) {
  const t0 = performance.now();
  const runs = allTrajectories();
  writeFileSync(arg('record', ''), JSON.stringify(runs));
  console.log(`${runs.length} trajectories written in ${(performance.now() - t0).toFixed(0)} ms`);
} else if (has('check')) {
  check(arg('check', ''));
} else if (has('detail')) {
  detail();
} else {
  timing();
}
