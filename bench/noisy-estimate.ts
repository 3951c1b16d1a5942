/**
 * The calibration of `/best`'s `estimated` on noisy problems (docs/ALGORITHM.md §28; the problems and the
 * loop: bench/lib/noisy-estimate.ts): 4-D sphere, rotated ellipsoids of condition 10³ and 10⁶ and rotated
 * Rosenbrock, optimum 1–2 prior standard deviations from the prior mean, additive Gaussian noise of 1% and
 * 10% of |f| at the prior mean, 80 evaluations, prob-cmaes with its defaults, batch 3, with and without the
 * budget declared (max_trials, which sizes the start phase of §29).
 *
 *   npx tsx bench/noisy-estimate.ts [--dims 4] [--budget 80] [--seeds 1-50] [--out DIR]
 *
 * Each run reports two estimates at the same final μ: `uncorrected`, the model's posterior at μ (the
 * estimate before the correction for the optimism of a chosen point; the search itself did not change, so
 * it is the earlier releases' estimate on the same run), and `corrected`, what the engine reports. Per
 * setting: the share of runs with |z| ≤ 1.96, z = (f(μ) − predicted)/std with f noise-free (95% for a
 * calibrated estimate), the median z (0), and the runs whose prediction is below the true minimum f*.
 *
 * --out DIR writes DIR/results.md (the tables, the command, the commit, the machine) and DIR/runs.jsonl.gz
 * (one record per run).
 */
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { getStrategy } from '../src/engine/strategies/registry.js';
import type { ProbnesState } from '../src/engine/strategies/probnes-state.js';
import { parseRange } from './lib/bbob-args.js';
import { PROBLEM_KINDS, runEstimate, summarise, type CalibrationSummary, type ProblemKind } from './lib/noisy-estimate.js';
import { currentProvenance, writePublished } from './lib/provenance.js';

const argv = process.argv.slice(2);
const { values: v } = parseArgs({ args: argv, options: { dims: { type: 'string' }, budget: { type: 'string' }, seeds: { type: 'string' }, out: { type: 'string' } }, strict: true });
const dims = parseRange(v.dims ?? '4', 'dims');
const budget = Number(v.budget ?? 80);
const seeds = parseRange(v.seeds ?? '1-50', 'seeds');
const started = new Date();
const loadStart = loadavg();
const printed: string[] = [];
const print = (line: string) => {
  printed.push(line);
  console.log(line);
};
const estimate = getStrategy('prob-cmaes').estimate!;
const records: object[] = [];
type Row = { predicted: number; std: number; trueAtMean: number; fOpt: number };
const fmt = (s: CalibrationSummary) => `${(100 * s.coverage).toFixed(0)}% | ${s.medianZ >= 0 ? '+' : '−'}${Math.abs(s.medianZ).toFixed(2)} | ${s.belowMin} of ${s.runs}`;

for (const dim of dims) {
  print(`## d = ${dim}, ${budget} evaluations, seeds ${seeds[0]}–${seeds[seeds.length - 1]}`);
  print('');
  print('| max_trials | noise | problems | runs | uncorrected: coverage 95% | median z | below f* | corrected: coverage 95% | median z | below f* |');
  print('|---|---|---|---|---|---|---|---|---|---|');
  for (const declare of [false, true]) {
    for (const noise of [0.01, 0.1]) {
      const rows: Record<'all' | ProblemKind, { raw: Row[]; cor: Row[] }> = Object.fromEntries(['all', ...PROBLEM_KINDS].map((k) => [k, { raw: [], cor: [] }])) as never;
      for (const kind of PROBLEM_KINDS) {
        for (const seed of seeds) {
          const r = runEstimate({ kind, dim, seed, noise, budget, declare, batch: 3 });
          // The model's own posterior at μ: the estimate without the residuals of earlier μ.
          const raw = estimate({ ...r.state, surprises: [] } as ProbnesState, []);
          const base = { trueAtMean: r.trueAtMean, fOpt: r.fOpt };
          const a = { ...base, predicted: raw.predicted!, std: raw.predicted_std! }, b = { ...base, predicted: r.predicted!, std: r.predictedStd! };
          for (const k of ['all', kind] as const) {
            rows[k].raw.push(a);
            rows[k].cor.push(b);
          }
          records.push({
            dim, budget, declare, noise, kind, seed, f_opt: r.fOpt, noise_std: r.noiseStd, mean: r.mean, true_at_mean: r.trueAtMean,
            uncorrected: { predicted: a.predicted, std: a.std }, corrected: { predicted: b.predicted, std: b.std }, residuals: r.state.surprises?.length ?? 0,
          });
        }
      }
      for (const k of ['all', ...PROBLEM_KINDS] as const) {
        print(`| ${declare ? budget : 'none'} | ${100 * noise}% | ${k} | ${rows[k].raw.length} | ${fmt(summarise(rows[k].raw))} | ${fmt(summarise(rows[k].cor))} |`);
      }
    }
  }
  print('');
}
print('z = (f(μ) − predicted)/std, f noise-free at the reported parameters μ; coverage: |z| ≤ 1.96; below f*: predicted < the true minimum.');
if (v.out) {
  const files = writePublished(v.out, { title: 'bench:noisy-estimate', provenance: currentProvenance(`npx tsx bench/noisy-estimate.ts ${argv.join(' ')}`.trim()), started, loadStart, printed, records });
  console.log(`\nwritten: ${files.join(', ')} (${records.length} runs)`);
}
