/**
 * No BBOB function goes below its f_opt: 10^6 points per function (lib/bbob-probe.ts), for every
 * function and the given dimensions.
 * The unit test (test/engine/bbob.test.ts) runs the same check with 10^5 points at d = 5.
 *
 *   npm run bench:bbob-check                 # d = 5, 10^6 points per function, instances 1–5 in turn
 *   npm run bench:bbob-check -- --dims 2,5,10,20 --points 1000000
 */
import { parseArgs } from 'node:util';
import { BBOB_FUNCTIONS, bbobProblem } from '../src/engine/benchmarks/bbob.js';
import { Rng } from '../src/engine/random/index.js';
import { probeMinimum } from './lib/bbob-probe.js';

const { values } = parseArgs({ options: { dims: { type: 'string' }, points: { type: 'string' } } });
const dims = (values.dims ?? '5').split(',').map(Number);
const n = Number(values.points ?? 1_000_000);
let failures = 0;
for (const d of dims) {
  const rng = Rng.fromSeed(2009 + d);
  const t0 = performance.now();
  const lines: string[] = [];
  for (let fn = 1; fn <= BBOB_FUNCTIONS; fn++) {
    const min = probeMinimum(bbobProblem(fn, d, 1 + (fn % 5)), n, rng);
    if (min < -1e-12) failures++;
    lines.push(`f${fn}: min f − f_opt = ${min.toExponential(3)}${min < -1e-12 ? '  BELOW f_opt' : ''}`);
    process.stderr.write('.');
  }
  process.stdout.write(`\nd = ${d}, ${n} points per function, ${((performance.now() - t0) / 1000).toFixed(1)} s:\n${lines.join('\n')}\n`);
}
process.stdout.write(failures === 0 ? 'no function below f_opt\n' : `${failures} functions below f_opt\n`);
process.exitCode = failures === 0 ? 0 : 1;
