/**
 * The moderate-noise BBOB functions f101–f106, scored by the noise-free value of each method's
 * recommended point (bench/lib/bbob-noisy.ts), with the calibration of the model's estimate:
 *
 *   npm run bench:bbob-noisy -- --methods prob-cmaes,prob-cmaes:paper,lq-cmaes,cmaes,bobyqa --dims 2,5 --out bench-results/bbob-noisy
 *   npm run bench:bbob-noisy -- --methods prob-cmaes --stderr --out bench-results/bbob-noisy-stderr   # observations report the noise's sd
 *
 * Options: --methods (service methods, m:paper, and the peers bobyqa, newuoa), --dims 2,5,
 * --functions 101-106, --instances 1-5, --budget-per-dim 20,50, --stderr, --out. Writes runs.jsonl
 * and results.md to --out; runs one at a time (nice it: the machine is shared).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { NOISY_FUNCTIONS, type NoisyFunction } from '../src/engine/benchmarks/bbob.js';
import { noiseCentre } from '../src/engine/benchmarks/bbob/noisy.js';
import { UsageError } from './lib/args.js';
import { defaultPopulation, parseBbobConfig, parseRange } from './lib/bbob-args.js';
import { renderNoisyReport, runNoisyPeer, runNoisyService, type NoisyRecord } from './lib/bbob-noisy.js';
import { isPeer } from './lib/bbob-peers.js';
import { Progress } from './lib/progress.js';
import { currentProvenance, describeProvenance } from './lib/provenance.js';

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const { values: v } = parseArgs({
    args: argv,
    options: {
      methods: { type: 'string' }, dims: { type: 'string' }, functions: { type: 'string' }, instances: { type: 'string' },
      'budget-per-dim': { type: 'string' }, stderr: { type: 'boolean' }, out: { type: 'string' }, 'report-only': { type: 'boolean' }, 'alt-std': { type: 'boolean' },
    },
    strict: true,
  });
  // The method variants are read as bench:bbob reads them (profiles, peers).
  const { variants } = parseBbobConfig(['--methods', v.methods ?? 'prob-cmaes,lq-cmaes,cmaes,bobyqa', '--functions', '1']);
  const dims = parseRange(v.dims ?? '2,5', 'dims');
  const fns = parseRange(v.functions ?? '101-106', 'functions');
  if (!fns.every((f) => (NOISY_FUNCTIONS as readonly number[]).includes(f))) throw new UsageError('--functions: the moderate-noise functions are 101…106');
  const instances = parseRange(v.instances ?? '1-5', 'instances');
  const perDim = [...new Set(parseRange(v['budget-per-dim'] ?? '20,50', 'budget-per-dim'))].sort((a, b) => a - b);
  const out = v.out ?? 'bench-results/bbob-noisy';
  mkdirSync(out, { recursive: true });
  const provenance = currentProvenance(`npm run bench:bbob-noisy -- ${argv.join(' ')}`.trim());
  const jobs = dims.flatMap((dim) => fns.flatMap((fn) => variants.flatMap((variant) => instances.map((instance) => ({ variant, fn, dim, instance })))));
  const progress = new Progress(jobs.length);
  const runs: (NoisyRecord & { provenance: typeof provenance })[] = [];
  if (v['report-only']) {
    // Report the runs already in <out>/runs.jsonl (records written before centre_at_mean existed get it
    // from the noise-free value: μ lies in the box, where f_pen = 0, so c(μ) = f_opt + noiseCentre(f(μ) − f_opt)).
    for (const line of readFileSync(join(out, 'runs.jsonl'), 'utf8').split('\n').filter(Boolean)) {
      const r = JSON.parse(line) as NoisyRecord & { provenance: typeof provenance };
      for (const c of r.checkpoints) {
        if (c.centre_at_mean === undefined && c.true_at_mean !== null) c.centre_at_mean = r.f_opt + noiseCentre(r.fn as NoisyFunction, c.true_at_mean - r.f_opt, r.dim);
      }
      runs.push(r);
    }
    jobs.length = 0;
  } else writeFileSync(join(out, 'runs.jsonl'), '');
  for (const j of jobs) {
    const spec = {
      variant: j.variant.label, method: j.variant.method, options: j.variant.options, fn: j.fn, dim: j.dim, instance: j.instance,
      batch: defaultPopulation(j.variant.method, j.dim), checkpoints: perDim.map((k) => k * j.dim), stderr: v.stderr === true,
    };
    const method = j.variant.method;
    const r = isPeer(method) ? await runNoisyPeer({ ...spec, method }) : runNoisyService({ ...spec, method });
    const rec = { ...r, provenance };
    runs.push(rec);
    writeFileSync(join(out, 'runs.jsonl'), `${JSON.stringify(rec)}\n`, { flag: 'a' });
    progress.tick(true);
  }
  const md = renderNoisyReport(runs, [
    `Command: \`${provenance.command}\``,
    ...(v['report-only'] ? [`Report of the runs in ${out}/runs.jsonl (made by: ${[...new Set(runs.map((r) => `\`${r.provenance.command}\``))].join(', ')}).`] : []),
    describeProvenance(runs.map((r) => r.provenance)),
    `Observations ${v.stderr ? 'report the noise\'s standard deviation at their point as stderr (none for the Cauchy model)' : 'report no stderr'}. Load average at the end: ${loadavg().map((l) => l.toFixed(1)).join(', ')}.`,
  ], variants.map((x) => x.label), perDim, v['alt-std'] === true);
  writeFileSync(join(out, 'results.md'), md);
  process.stdout.write(md);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof UsageError ? e.message : e instanceof Error ? e.stack : String(e)}\n`);
  process.exitCode = e instanceof UsageError ? 2 : 1;
});
