/**
 * Per-generation wall time of the ProbNES loop with a breakdown (GP fit, gradient + update,
 * acquisition), at a fixed number of active points.
 *
 *   npx tsx bench/probnes-speed.ts [--dims 2,10,30] [--n 150] [--q 3] [--reps 15] [--candidates 1000]
 *
 * Setting: n points drawn from ν = N(0, I) (all inside the active set), y = Ackley-like values,
 * a warm start from the MAP fit on the first n − q points (the default profile's situation).
 * One "generation" = active set + standardise + fit + gradient + update (tell) + batch BQ (ask).
 */
import { performance } from 'node:perf_hooks';
import { Rng } from '../src/engine/random/index.js';
import { activeSet, standardise } from '../src/engine/strategies/probnes-data.js';
import { expectedGradient, fitModel, sampleFrom, selectBatch } from '../src/engine/strategies/probnes-bq.js';
import { updateCovCmaes, updateMean } from '../src/engine/strategies/probnes-updates.js';

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : dflt;
}
const dims = arg('dims', '2,10,30').split(',').map(Number);
const n = Number(arg('n', '150'));
const q = Number(arg('q', '3'));
const reps = Number(arg('reps', '15'));
const M = Number(arg('candidates', '1000'));

const ackley = (x: number[]) => {
  const d = x.length;
  const a = Math.sqrt(x.reduce((s, v) => s + v * v, 0) / d);
  const b = x.reduce((s, v) => s + Math.cos(2 * Math.PI * v), 0) / d;
  return -20 * Math.exp(-0.2 * a) - Math.exp(b) + 20 + Math.E;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

console.log(`ProbNES per-generation time, n = ${n} active points, q = ${q}, M = ${M} candidate batches, ${reps} reps (median ms)`);
console.log('| d | total | active set + standardise | GP fit (2 starts) | gradient + update | batch-BQ ask |');
console.log('|---|---|---|---|---|---|');
for (const d of dims) {
  const rows: number[][] = [];
  for (let r = 0; r < reps; r++) {
    const rng = Rng.fromSeed(100 + r);
    const mean = new Array(d).fill(0);
    const cov = Array.from({ length: d }, (_, i) => Array.from({ length: d }, (_, j) => (i === j ? 1 : 0)));
    const history = sampleFrom(mean, cov, n, rng).map((x) => ({ x, y: ackley(x) }));
    const prevSt = standardise(history.slice(0, n - q).map((o) => o.y));
    const warm = fitModel(history.slice(0, n - q).map((o) => o.x), prevSt.z.map((v) => -v), { warmStart: null, restarts: 0, rng }).model.hyper;
    const t0 = performance.now();
    const idx = activeSet(history, mean, cov, { enabled: true, quantile: 0.9973, minSize: q });
    const st = standardise(idx.map((j) => history[j].y));
    const t1 = performance.now();
    const fit = fitModel(idx.map((j) => history[j].x), st.z.map((v) => -v), { warmStart: warm, restarts: 0, rng });
    const t2 = performance.now();
    const g = expectedGradient(fit.model, mean, cov);
    const mean2 = updateMean(mean, cov, g.gMean, 1);
    const cov2 = updateCovCmaes(cov, g.gCov, 0.5);
    const t3 = performance.now();
    selectBatch(fit.model, mean2, cov2, [mean2], q - 1, M, rng);
    const t4 = performance.now();
    rows.push([t4 - t0, t1 - t0, t2 - t1, t3 - t2, t4 - t3]);
  }
  const med = [0, 1, 2, 3, 4].map((k) => median(rows.map((r) => r[k])).toFixed(1));
  console.log(`| ${d} | ${med.join(' | ')} |`);
}
