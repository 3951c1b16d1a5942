/**
 * Per-generation wall time of the ProbNES loop with a breakdown (GP fit, gradient + update,
 * acquisition), at a fixed number of active points; and a trajectory recorder that proves a speed
 * change did not change results.
 *
 *   npx tsx bench/probnes-speed.ts [--cases 2:150,10:500] [--profiles default,paper] [--q 3] [--reps 11] [--warmup 5] [--no-uncapped] [--set k=v,…]
 *   npx tsx bench/probnes-speed.ts --growing [--dims 2,10] [--ns 100,200,400,800] [--uncapped-max 400]
 *   npx tsx bench/probnes-speed.ts --record FILE[.gz] [--gens 20] [--seeds 1,2,3] [--profiles default,paper]
 *   npx tsx bench/probnes-speed.ts --check [FILE] [--profiles …] [--tol 1e-9]
 *   npx tsx bench/probnes-speed.ts --detail [--dims 10,30]     where the time goes (CPU ms)
 *   npx tsx bench/probnes-speed.ts --start-phase [--dims 10,20] [--seeds 5]   a sequential worker's ask and tell
 *                                                 (CPU ms) during Powell's start phase (ALGORITHM.md §29) and after it
 *   npm run bench:probnes-speed -- --out DIR      the default run (timing, covariance updates, growing
 *                                                 study), its tables also written to DIR/results.md
 *
 * --out DIR: DIR/results.md holds the printed tables with the command, the commit (and whether the
 * tree was clean), Node, the CPU and the load average (1-minute, read before every case: CPU figures
 * on a shared machine are inflated by the other processes); DIR/runs.jsonl.gz one line per timed
 * generation (wall, CPU, tell, ask, active points, the load average then), so every median recomputes.
 *
 * Timing setting: a study of n points drawn from ν = N(0, I) (all inside the χ² ellipsoid), y =
 * Ackley values; one "generation" of Prob-CMAES with the profile's options = active set (capped in
 * the default profile) + standardise + GP fit (warm-started in the default profile from the MAP on
 * the first n − q points) + gradient + update (tell) + batch BQ (ask), after --warmup untimed generations
 * of the same case (JIT warm-up; default 5: with one, the first timed generations at
 * d = 10 still paid for V8 compiling the engine, 55–88 ms against ≈ 20 ms once warm, and that moved the
 * median of 11 by several ms). Medians over --reps studies of the wall time and of the process CPU time (user + system), total and per part; the load of
 * other processes on a shared machine inflates CPU time much less than wall time. The default run
 * prints the target cases (d = 2 with 150 points, d = 10 with 500), the covariance update per method
 * and the growing-study series (CPU per generation at n = 100 … 800, capped and uncapped).
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
 * difference of the points and of (μ, Σ), failing (exit 1) above --tol. Without a FILE, --check
 * compares the paper profile with bench/reference/probnes-paper-trajectories.json.gz, recorded
 * before the speed work: the paper profile must reproduce it bit for bit, whatever the default
 * profile does. With a FILE of your own (--record before a change), it compares both profiles.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';
import { performance } from 'node:perf_hooks';
import { getBenchmark } from '../src/engine/benchmarks/index.js';
import { resolveOptions, type MethodName } from '../src/engine/index.js';
import { Rng } from '../src/engine/random/index.js';
import { getStrategy } from '../src/engine/strategies/registry.js';
import { generationSize, type Observation } from '../src/engine/strategies/types.js';
import { standardise } from '../src/engine/strategies/probnes-data.js';
import { drawCandidateBatchesStacked, expectedGradientRows, fitProbnesGp, sampleFrom } from '../src/engine/strategies/probnes-bq.js';
import { fitGp, mapObjectiveEvaluator, packHyper, probnesPriors, toMat } from '../src/engine/gp/index.js';
import { kernelMatrixInto } from '../src/engine/gp/kernel.js';
import { choleskyInto, cholInverseSymInto, cholSolve } from '../src/engine/linalg/index.js';
import { prepareBatchSelection } from '../src/engine/quadrature/index.js';
import { candidateTerms } from '../src/engine/quadrature/candidates.js';
import { kernelMeansFor, prepareKernelMeasure } from '../src/engine/quadrature/measure.js';
import { updateCovCmaes, updateCovSnes, updateCovXnes } from '../src/engine/strategies/probnes-updates.js';
import { currentProvenance, writePublished } from './lib/provenance.js';

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : dflt;
}
const has = (name: string) => process.argv.includes(`--${name}`);
/** Untimed generations of each case before its timed ones (--warmup, default 5). */
const warmups = () => Number(arg('warmup', '5'));
/** --set key=value,… : options applied on top of every timed generation's (e.g. --set gp_cold_start_every=1). */
function optionOverrides(): Record<string, number | string | boolean> {
  const out: Record<string, number | string | boolean> = {};
  for (const kv of arg('set', '').split(',').filter(Boolean)) {
    const [k, v] = kv.split('=');
    out[k] = v === 'true' ? true : v === 'false' ? false : Number.isFinite(Number(v)) ? Number(v) : v;
  }
  return out;
}

const ackley = (x: number[]) => {
  const d = x.length;
  const a = Math.sqrt(x.reduce((s, v) => s + v * v, 0) / d);
  const b = x.reduce((s, v) => s + Math.cos(2 * Math.PI * v), 0) / d;
  return -20 * Math.exp(-0.2 * a) - Math.exp(b) + 20 + Math.E;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** What --out writes: the printed lines (results.md) and one record per timed measurement (runs.jsonl.gz). */
const printed: string[] = [];
const records: Record<string, unknown>[] = [];
function emit(line: string): void {
  printed.push(line);
  console.log(line);
}
/** 1-minute load average, kept with every record: the other processes' share of the cores. */
const loads: number[] = [];
function load1(): number {
  const l = loadavg()[0];
  loads.push(l);
  return l;
}

/** Process CPU time in ms since `c0` (user + system). */
function cpuSince(c0: NodeJS.CpuUsage): number {
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
}

interface GenTimes {
  wall: number;
  cpu: number;
  /** CPU ms of tell (active set, standardise, GP fit, gradient, update) and ask (μ + batch BQ). */
  parts: [number, number];
  nActive: number;
}

/**
 * One generation of Prob-CMAES through the strategy contract, with the options of `profile` (plus
 * `extra`), on a study of n points drawn from N(0, I): the state has told the first n − q points (so
 * the default profile's warm start exists), its ν is then reset to N(0, I) (every point inside the
 * χ² ellipsoid), and the timed generation is one tell with all n points plus one ask of q points.
 */
function generation(d: number, n: number, q: number, seed: number, profile: string, extra: Record<string, number> = {}): GenTimes {
  const strategy = getStrategy('prob-cmaes');
  const options = { ...resolveOptions('prob-cmaes', d, { profile }), ...extra, ...optionOverrides() };
  const rng = Rng.fromSeed(seed);
  const mean = new Array(d).fill(0);
  const cov = Array.from({ length: d }, (_, i) => Array.from({ length: d }, (_, j) => (i === j ? 1 : 0)));
  const history: Observation[] = sampleFrom(mean, cov, n, rng).map((x) => ({ x, y: ackley(x) }));
  let state = strategy.init({ dim: d, batchSize: q, options, box: null }, Rng.fromSeed(seed));
  const prev = history.slice(0, n - q);
  state = strategy.tell(state, { batch: prev.slice(-q), history: prev });
  state = { ...state, mean, cov };
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const told = strategy.tell(state, { batch: history.slice(-q), history });
  const c1 = cpuSince(c0);
  strategy.ask(told, { history, pending: [] }, q);
  const c2 = cpuSince(c0);
  return { wall: performance.now() - t0, cpu: c2, parts: [c1, c2 - c1], nActive: Number(told.diagnostics.n_active) };
}

function timing(): void {
  const q = Number(arg('q', '3'));
  const reps = Number(arg('reps', '11'));
  const cases = arg('cases', '2:150,10:500').split(',').map((c) => c.split(':').map(Number));
  emit(`ProbNES (Prob-CMAES) one generation on a study of n points, q = ${q}, ${reps} reps: median wall ms and median CPU ms`);
  emit('');
  emit('| profile | d | n in study | active points | wall | CPU | CPU: tell (active set, fit, gradient, update) | CPU: ask (batch BQ) |');
  emit('|---|---|---|---|---|---|---|---|');
  // "default, no pool or cap" is the default profile as it was before the candidate pool and the cap.
  const variants: [string, string, Record<string, number>][] = [
    ['default', 'default', {}],
    ['default, no pool or cap', 'default', { candidate_pool: 0, active_set_cap: 0 }],
    ['paper', 'paper', {}],
  ];
  const wanted = arg('profiles', 'default,paper').split(',');
  // --no-uncapped: skip "default, no pool or cap" (d = 10 with 500 points takes seconds per generation).
  const chosen = variants.filter(([label, p]) => wanted.includes(p) && !(has('no-uncapped') && label !== p));
  for (const [label, profile, extra] of chosen) {
    for (const [d, n] of cases) {
      // Untimed generations first (--warmup): the first timed case otherwise pays for compiling the
      // engine (process CPU counts V8's background compiler threads), whichever case that is.
      for (let w = 0; w < warmups(); w++) generation(d, n, q, 99 - w, profile, extra);
      const rows = Array.from({ length: reps }, (_, r) => {
        const load = load1();
        const t = generation(d, n, q, 100 + r, profile, extra);
        records.push({ table: 'timing', variant: label, d, n, q, seed: 100 + r, wall: t.wall, cpu: t.cpu, tell: t.parts[0], ask: t.parts[1], nActive: t.nActive, load1: load });
        return t;
      });
      const med = (f: (t: GenTimes) => number) => median(rows.map(f)).toFixed(1);
      emit(`| ${label} | ${d} | ${n} | ${rows[0].nActive} | ${med((t) => t.wall)} | ${med((t) => t.cpu)} | ${[0, 1].map((k) => med((t) => t.parts[k])).join(' | ')} |`);
    }
  }
  covarianceUpdates(arg('dims', '2,10').split(',').map(Number), reps);
}

/**
 * CPU per generation as the study grows: the default profile (active set capped at `active_set_cap`)
 * against the same profile without the cap. Without the cap the active set is the whole study here
 * (every point is inside the χ² ellipsoid of ν), so its fit grows as n³.
 */
function growing(): void {
  const q = Number(arg('q', '3'));
  const reps = Number(arg('reps', '5'));
  const ns = arg('ns', '100,200,400,800').split(',').map(Number);
  const uncappedMax = Number(arg('uncapped-max', '400'));
  const cap = Number(resolveOptions('prob-cmaes', 2, {}).active_set_cap);
  emit('');
  emit(`Growing study: median CPU ms per generation (${reps} reps), default profile with its cap of ${cap} active points vs no cap (active_set_cap = 0)`);
  emit('');
  emit(`| d | ${ns.map((n) => `n = ${n}`).join(' | ')} |`);
  emit(`|---|${ns.map(() => '---').join('|')}|`);
  for (const d of arg('dims', '2,10').split(',').map(Number)) {
    const cell = (n: number, extra: Record<string, number>) =>
      median(Array.from({ length: reps }, (_, r) => {
        const load = load1();
        const t = generation(d, n, q, 100 + r, 'default', extra);
        records.push({ table: 'growing', variant: extra.active_set_cap === 0 ? 'no cap' : `cap ${cap}`, d, n, q, seed: 100 + r, wall: t.wall, cpu: t.cpu, tell: t.parts[0], ask: t.parts[1], nActive: t.nActive, load1: load });
        return t.cpu;
      })).toFixed(1);
    for (let w = 0; w < warmups(); w++) generation(d, ns[0], q, 99 - w, 'default', {}); // untimed warm-up, as in the timing table
    emit(`| ${d}, cap ${cap} | ${ns.map((n) => cell(n, {})).join(' | ')} |`);
    emit(`| ${d}, no cap | ${ns.map((n) => (n <= uncappedMax ? cell(n, { active_set_cap: 0 }) : '–')).join(' | ')} |`);
  }
}

/** The three methods differ only in the covariance update (ALGORITHM.md §4): timed apart. */
function covarianceUpdates(dims: number[], reps: number): void {
  emit('');
  emit('Covariance update alone, per method (median wall ms of 50 calls; the rest of a generation is shared by the three)');
  emit('');
  emit('| d | Prob-CMAES | Prob-XNES (expm) | Prob-SNES (natural) |');
  emit('|---|---|---|---|');
  for (const d of dims) {
    const rows: number[][] = [];
    for (let r = 0; r < reps; r++) {
      const rng = Rng.fromSeed(100 + r);
      const mean = new Array(d).fill(0);
      const cov = Array.from({ length: d }, (_, i) => Array.from({ length: d }, (_, j) => (i === j ? 1 : 0)));
      const history = sampleFrom(mean, cov, 60, rng).map((x) => ({ x, y: ackley(x) }));
      const st = standardise(history.map((o) => o.y));
      const fit = fitProbnesGp(history.map((o) => o.x), st.yTilde.map((v) => -v), { warmStart: null, restarts: 0, rng });
      const g = expectedGradientRows(fit.model, mean, cov);
      const per = (fn: () => void) => {
        const s0 = performance.now();
        for (let i = 0; i < 50; i++) fn();
        return (performance.now() - s0) / 50;
      };
      const load = load1();
      const row = [
        per(() => updateCovCmaes(cov, g.gCov, 0.5)),
        per(() => updateCovXnes(cov, g.gCov, 0.5)),
        per(() => updateCovSnes(cov, g.gCov, 1, 'natural')),
      ];
      records.push({ table: 'covariance', d, seed: 100 + r, 'prob-cmaes': row[0], 'prob-xnes': row[1], 'prob-snes': row[2], load1: load });
      rows.push(row);
    }
    emit(`| ${d} | ${[0, 1, 2].map((k) => median(rows.map((r) => r[k])).toFixed(3)).join(' | ')} |`);
  }
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
    const warm = fitProbnesGp(history.slice(0, n - q).map((o) => o.x), prevSt.yTilde.map((v) => -v), { warmStart: null, restarts: 0, rng }).model.hyper;
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

function allTrajectories(profiles = arg('profiles', 'default,paper').split(',')): Trajectory[] {
  const gens = Number(arg('gens', '20'));
  const seeds = arg('seeds', '1,2,3').split(',').map(Number);
  const out: Trajectory[] = [];
  for (const method of METHODS) {
    for (const profile of profiles) {
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

/** The paper profile's trajectories as recorded when the reference was made (see the header). */
const REFERENCE = fileURLToPath(new URL('./reference/probnes-paper-trajectories.json.gz', import.meta.url));

function readRuns(file: string): Trajectory[] {
  const raw = readFileSync(file);
  return JSON.parse((file.endsWith('.gz') ? gunzipSync(raw) : raw).toString('utf8')) as Trajectory[];
}

function check(file: string | undefined): void {
  const tol = Number(arg('tol', '1e-9'));
  const profiles = arg('profiles', file ? 'default,paper' : 'paper').split(',');
  const before = readRuns(file ?? REFERENCE).filter((t) => profiles.includes(t.key.split('/')[1]));
  const t0 = performance.now();
  const now = allTrajectories(profiles);
  const ms = performance.now() - t0;
  let worst = 0, identical = 0;
  for (const b of before) {
    const a = now.find((t) => t.key === b.key);
    if (!a) throw new Error(`run ${b.key} missing`);
    const rel = Math.max(maxRel(a.points.flat(), b.points.flat()), maxRel(a.mean, b.mean), maxRel(a.cov.flat(), b.cov.flat()));
    if (rel === 0) identical++;
    else console.log(`${b.key}: largest relative difference ${rel.toExponential(2)}`);
    worst = Math.max(worst, rel);
  }
  console.log(`${before.length} runs, ${identical} bit-identical, largest relative difference ${worst.toExponential(2)} (tolerance ${tol}); ${ms.toFixed(0)} ms`);
  if (!(worst <= tol)) process.exit(1);
}

if (has('record')) {
  const t0 = performance.now();
  const runs = allTrajectories();
  const file = arg('record', '');
  const json = Buffer.from(JSON.stringify(runs));
  writeFileSync(file, file.endsWith('.gz') ? gzipSync(json, { level: 9 }) : json);
  console.log(`${runs.length} trajectories written in ${(performance.now() - t0).toFixed(0)} ms`);
} else if (has('check')) {
  const file = process.argv[process.argv.indexOf('--check') + 1];
  check(file && !file.startsWith('--') ? file : undefined);
} else if (has('detail')) {
  detail();
} else if (has('start-phase')) {
  const command = `npm run bench:probnes-speed -- ${process.argv.slice(2).join(' ')}`.trim();
  const provenance = currentProvenance(command);
  const started = new Date();
  const loadStart = loadavg();
  startPhase();
  if (has('out')) writeOut(arg('out', ''), provenance, started, loadStart);
} else if (has('growing')) {
  growing();
} else {
  const command = `npm run bench:probnes-speed -- ${process.argv.slice(2).join(' ')}`.trim();
  const provenance = currentProvenance(command);
  const started = new Date();
  const loadStart = loadavg();
  timing();
  if (!has('no-growing')) growing();
  if (has('out')) writeOut(arg('out', ''), provenance, started, loadStart);
}

/** --out: results.md (what was printed, with its origin and the machine's load) and runs.jsonl.gz. */
function writeOut(dir: string, provenance: ReturnType<typeof currentProvenance>, started: Date, loadStart: number[]): void {
  const loadDetail = `1-minute load read before each timed generation: ${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)} (median ${median(loads).toFixed(2)}). CPU times include what the other processes' load costs this one (caches, memory bandwidth); wall times include waiting for a core.`;
  const files = writePublished(dir, { title: 'bench:probnes-speed', provenance, started, loadStart, printed, records, loadDetail });
  console.log(`\nwritten: ${files.join(', ')} (${records.length} records)`);
}

/**
 * --start-phase: a sequential worker (one point per ask, each reported before the next ask) on Ackley with
 * the prior N(−1, I), no budget declared: the CPU ms of each ask (what a suggestion waits for) and each tell
 * (what an observation waits for), in Powell's start phase (one result per generation; every q-th tell
 * also runs the natural-gradient update) and in the first 20 generations after it.
 */
function startPhase(): void {
  const dims = arg('dims', '10,20').split(',').map(Number);
  const seeds = Number(arg('seeds', '5'));
  emit('| d | part | asks: median CPU ms (max) | tells: median CPU ms (max) | tells with the GP update: median |');
  emit('|---|---|---|---|---|');
  for (const d of dims) {
    const parts = { phase: { ask: [] as number[], tell: [] as number[], gp: [] as number[] }, after: { ask: [] as number[], tell: [] as number[], gp: [] as number[] } };
    for (let seed = 1; seed <= seeds; seed++) {
      const strategy = getStrategy('prob-cmaes');
      let state = strategy.init({ dim: d, batchSize: 3, options: resolveOptions('prob-cmaes', d, {}), box: null }, Rng.fromSeed(seed));
      const history: { x: number[]; y: number }[] = [];
      let after = 0;
      while (after < 20) {
        const inPhase = (state as { start?: unknown }).start != null;
        const part = inPhase ? parts.phase : parts.after;
        const count = generationSize(state);
        let c0 = process.cpuUsage();
        const asked = strategy.ask(state, { history, pending: [] }, count);
        const askMs = cpuSince(c0);
        if (count === 1 || !inPhase) part.ask.push(askMs);
        const batch = asked.points.map((u) => ({ x: u, y: ackley(u.map((v) => v - 1)) }));
        history.push(...batch);
        const gpBefore = (asked.state as { gp?: unknown }).gp;
        c0 = process.cpuUsage();
        state = strategy.tell(asked.state, { batch, history: [...history] });
        const tellMs = cpuSince(c0);
        if ((state as { gp?: unknown }).gp !== gpBefore) part.gp.push(tellMs);
        part.tell.push(tellMs);
        records.push({ table: 'start-phase', d, seed, inPhase, count, askMs, tellMs, load1: load1() });
        if (!inPhase) after++;
      }
    }
    const fmt = (xs: number[]) => (xs.length ? `${median(xs).toFixed(1)} (${Math.max(...xs).toFixed(1)})` : '–');
    emit(`| ${d} | start phase | ${fmt(parts.phase.ask)} | ${fmt(parts.phase.tell)} | ${parts.phase.gp.length ? median(parts.phase.gp).toFixed(1) : '–'} |`);
    emit(`| ${d} | after it | ${fmt(parts.after.ask)} | ${fmt(parts.after.tell)} | ${parts.after.gp.length ? median(parts.after.gp).toFixed(1) : '–'} |`);
  }
}
