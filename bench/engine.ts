/**
 * Engine micro-benchmarks: median times of a GP fit, a BQ expected gradient, and the selection of one
 * batch out of 1000 candidate batches (q = 3), for d ∈ {2, 10, 30} and n ∈ {50, 150, 500}; and the
 * hand-written Float64Array Cholesky against ml-matrix's CholeskyDecomposition.
 *
 * Both wall-clock and process CPU time are reported: on a shared machine the wall time includes
 * waiting for a core, while CPU time (process.cpuUsage) is what the computation itself costs.
 * Targets (2-core machine): d = 2, n = 150: GP fit ≤ 100 ms, batch selection ≤ 50 ms.
 *
 * Usage: npm run bench:engine [-- --quick]
 */
import { loadavg } from 'node:os';
import { CholeskyDecomposition, Matrix } from 'ml-matrix';
import { type GpModel, fitGp, kernelMatrix, probnesPriors, toMat } from '../src/engine/gp/index.js';
import { tryCholesky, toRows } from '../src/engine/linalg/index.js';
import { expectedGradient, prepareBatchSelection } from '../src/engine/quadrature/index.js';
import { Rng } from '../src/engine/random/index.js';

const quick = process.argv.includes('--quick');

interface Timing {
  wall: number;
  cpu: number;
}

/** Median over `reps` runs of the per-call wall and CPU time (ms) of `inner` calls to fn. */
function time(fn: () => void, reps: number, inner = 1): Timing {
  fn(); // warm-up (JIT)
  const walls: number[] = [], cpus: number[] = [];
  for (let r = 0; r < reps; r++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < inner; i++) fn();
    walls.push((performance.now() - t0) / inner);
    const c = process.cpuUsage(c0);
    cpus.push((c.user + c.system) / 1000 / inner);
  }
  const med = (a: number[]) => a.sort((x, y) => x - y)[a.length >> 1];
  return { wall: med(walls), cpu: med(cpus) };
}

/** Standardised Ackley values at n points around the prior N(−1, I): a realistic fitting problem. */
function data(d: number, n: number, rng: Rng): { X: number[][]; y: number[] } {
  const X = Array.from({ length: n }, () => Array.from(rng.normals(d), (v) => v - 1));
  const raw = X.map((x) => {
    const a = Math.sqrt(x.reduce((s, v) => s + v * v, 0) / d);
    const b = x.reduce((s, v) => s + Math.cos(2 * Math.PI * v), 0) / d;
    return -20 * Math.exp(-0.2 * a) - Math.exp(b) + 20 + Math.E;
  });
  const m = raw.reduce((s, v) => s + v, 0) / n;
  const sd = Math.sqrt(raw.reduce((s, v) => s + (v - m) ** 2, 0) / (n - 1)) || 1;
  return { X, y: raw.map((v) => (v - m) / sd) };
}

function fmt(t: Timing): string {
  return `${t.wall.toFixed(1).padStart(8)} / ${t.cpu.toFixed(1).padStart(7)}`;
}

function benchCase(d: number, n: number): string {
  const rng = Rng.fromSeed(d * 1000 + n);
  const { X, y } = data(d, n, rng);
  const priors = probnesPriors(d);
  const fitReps = n >= 500 ? 1 : quick ? 3 : 5;
  let model: GpModel | null = null;
  const fit = time(() => { model = fitGp(X, y, { priors }).model; }, fitReps);
  const m = model!;
  const mean = new Array<number>(d).fill(-1);
  const cov = Array.from({ length: d }, (_, i) => Array.from({ length: d }, (_, j) => (i === j ? 0.5 : 0.1)));
  const grad = time(() => expectedGradient(m, mean, cov), 5, 20);
  const L = tryCholesky(toMat(cov))!;
  const cands = Array.from({ length: 1000 }, () => Array.from({ length: 3 }, () => {
    const z = rng.normals(d);
    return mean.map((mu, i) => mu + z.slice(0, i + 1).reduce((s, v, k) => s + L.data[i * d + k] * v, 0));
  }));
  const select = time(() => prepareBatchSelection(m, mean, cov, [mean]).selectBest(cands), quick ? 3 : 5);
  return `| ${String(d).padStart(2)} | ${String(n).padStart(3)} | ${fmt(fit)} | ${fmt(grad)} | ${fmt(select)} |`;
}

function benchCholesky(n: number): string {
  const rng = Rng.fromSeed(n);
  const X = toMat(Array.from({ length: n }, () => Array.from(rng.normals(2))));
  const K = kernelMatrix(X, { lengthscales: [1, 1], outputscale: 1, noise: 1e-2, constant: 0 });
  const reps = n >= 500 ? 5 : 20;
  const ours = time(() => tryCholesky(K), reps);
  const M = new Matrix(toRows(K));
  const theirs = time(() => new CholeskyDecomposition(M).lowerTriangularMatrix, reps);
  return `| ${String(n).padStart(3)} | ${fmt(ours)} | ${fmt(theirs)} | ${(theirs.cpu / ours.cpu).toFixed(1)}× |`;
}

console.log(`engine bench: node ${process.version}, load average ${loadavg().map((v) => v.toFixed(1)).join(' ')}${quick ? ' (quick)' : ''}`);
console.log('times in ms, median, wall / CPU; gradient = expectedGradient; selection = prepare + best of 1000 batches (q = 3)\n');
console.log('|  d |   n | GP fit (wall / cpu) | BQ gradient (wall / cpu) | batch selection (wall / cpu) |');
console.log('|---:|----:|---:|---:|---:|');
for (const d of [2, 10, 30]) for (const n of [50, 150, 500]) console.log(benchCase(d, n));
console.log('\n|   n | hand-written Cholesky (wall / cpu) | ml-matrix CholeskyDecomposition (wall / cpu) | ml-matrix / ours (cpu) |');
console.log('|----:|---:|---:|---:|');
for (const n of [150, 500]) console.log(benchCholesky(n));
console.log(`\nload average at the end: ${loadavg().map((v) => v.toFixed(1)).join(' ')}`);
