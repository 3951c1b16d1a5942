/**
 * How long the exact hypervolume takes (src/engine/multi/hypervolume.ts: the 2-D sweep, WFG for
 * m ≥ 3) and the contribution of every point, on n seeded points of the unit sphere's positive part,
 * all mutually non-dominated (the worst case for a front of that size). Prints the median of 5 runs
 * and the 1-minute load average, which inflates every figure on a shared machine.
 *
 *   nice -n 10 npx tsx bench/hypervolume-speed.ts
 */
import { loadavg } from 'node:os';
import { hypervolume, hypervolumeContributions } from '../src/engine/multi/hypervolume.js';
import { Rng } from '../src/engine/random/index.js';

const CASES: [m: number, n: number, contributions: boolean][] = [
  [2, 10_000, true],
  [3, 100, true],
  [3, 500, false],
  [4, 100, true],
  [4, 200, false],
  [5, 100, false],
  [6, 50, false],
];

function sphere(rng: Rng, n: number, m: number): number[][] {
  return Array.from({ length: n }, () => {
    const z = Array.from({ length: m }, () => Math.abs(rng.normal()));
    const s = Math.hypot(...z);
    return z.map((v) => v / s);
  });
}

function medianMs(fn: () => void): number {
  const times = Array.from({ length: 5 }, () => {
    const t0 = performance.now();
    fn();
    return performance.now() - t0;
  });
  return times.sort((a, b) => a - b)[2];
}

console.log('| m | n | HV (ms) | contributions (ms) | load |');
console.log('|---|---|---|---|---|');
for (const [m, n, withContributions] of CASES) {
  const points = sphere(Rng.fromSeed(m * 1000 + n), n, m);
  const r = Array<number>(m).fill(1.1);
  const hv = medianMs(() => hypervolume(points, r));
  const contrib = withContributions ? medianMs(() => hypervolumeContributions(points, r)).toFixed(1) : '–';
  console.log(`| ${m} | ${n} | ${hv.toFixed(1)} | ${contrib} | ${loadavg()[0].toFixed(1)} |`);
}
