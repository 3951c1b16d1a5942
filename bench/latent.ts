/**
 * The paper's latent-space optimisation experiment (§5.3), rebuilt on the handwritten digits shipped in
 * bench/data/digits: maximise the classifier's log-probability of class 2 and of class 5 of the decoded
 * image over the 8-D latent space of a VAE, prior N(0, I) (bench/latent/task.ts). Runs through the same
 * runner as bench:paper (worker pool, run loop, runs.jsonl): 15 seeds, q = 3, 153 evaluations.
 *
 *   npm run bench:latent                                     # every method of the service
 *   npm run bench:latent -- --methods prob-cmaes,random --seeds 3 --workers 1
 *
 * Takes bench:paper's options except --functions. Writes to --out (default bench-results/latent):
 * runs.jsonl, results.md (ln mean regret = ln mean −log p(c | x̂), and its median over seeds),
 * figure-best.svg (regret against evaluations, as the paper's figure), best-digits.svg (the best decoded
 * digit per method and class), config.json. Publish with `gzip runs.jsonl`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { aggregate, statAt, taskLabel, type Group } from './lib/aggregate.js';
import { expandJobs, parseConfig, UsageError } from './lib/args.js';
import { runPool } from './lib/pool.js';
import { Progress } from './lib/progress.js';
import { currentProvenance, describeProvenance, type Provenance } from './lib/provenance.js';
import { renderReport } from './lib/report.js';
import type { RunRecord, RunSpec } from './lib/run.js';
import { openRunLog, replyCollector } from './lib/run-log.js';
import { renderFigure } from './lib/svg.js';
import { digitGridSvg } from './latent/images.js';
import { decode, loadWeights } from './latent/model.js';
import { LATENT_TASKS } from './latent/task.js';

type Logged = RunRecord & { provenance?: Provenance };

/** Every method of the service the issue of this task names: the ProbNES variants and the baselines. */
const METHODS = 'prob-cmaes,prob-xnes,prob-snes,cmaes,lq-cmaes,bo,pibo,random';
const CHECKPOINTS = [30, 75, 150];

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.some((a) => a === '--functions' || a.startsWith('--functions='))) throw new UsageError('bench:latent runs the latent-digit tasks only: drop --functions (bench:paper takes --functions latent-digit-2 too)');
  const functions = LATENT_TASKS.map((t) => t.name).join(',');
  const config = parseConfig(['--functions', functions, '--methods', METHODS, '--out', 'bench-results/latent', ...argv]);
  const provenance = currentProvenance(`npm run bench:latent -- ${argv.join(' ')}`.trim());
  const log = openRunLog<Logged>(config.out, config.resume, (r) => Array.isArray(r.values));
  const key = (r: { method: string; function: string; seed: number }): string => `${r.method}/${r.function}/${r.seed}`;
  const done = new Set(log.kept.map(key));
  const jobs = expandJobs(config)
    .filter((j) => !done.has(key({ method: j.method, function: j.fn, seed: j.seed })))
    .sort((a, b) => a.seed - b.seed);
  writeFileSync(join(config.out, 'config.json'), `${JSON.stringify({ argv, provenance, ...config }, null, 2)}\n`);
  process.stderr.write(`${jobs.length} runs (${config.methods.join(', ')} × ${config.tasks.length} tasks × ${config.seeds} seeds) on ${config.workers} workers → ${config.out}\n`);
  const records: Logged[] = [...log.kept];
  const progress = new Progress(jobs.length);
  const collector = replyCollector(log, records, provenance, (spec: RunSpec) => ({
    ids: { method: spec.method, function: spec.fn, dim: spec.dim, seed: spec.seed },
    label: `${spec.method} ${spec.fn} seed ${spec.seed}`,
  }), (ok) => progress.tick(ok));
  await runPool(jobs, config.workers, collector.take);
  const failures = collector.failures();

  const reported = records.filter((r) => config.methods.includes(r.method) && r.seed < config.seeds);
  const groups = aggregate(reported);
  const md = [
    renderReport(groups, {
      command: provenance.command,
      origin: describeProvenance(reported.map((r) => r.provenance)),
      seeds: config.seeds,
      budget: config.budget,
      batch: config.batch,
      prior: 'N(0, I), the VAE\'s latent prior',
      options: JSON.stringify(config.options),
      failures,
    }).replace('# ProbNES benchmark: ln(mean regret) over seeds', '# Latent-space optimisation on the handwritten digits: ln(mean regret) over seeds'),
    ...medianTable(groups, reported),
  ].join('\n');
  writeFileSync(join(config.out, 'results.md'), `${md}\n`);
  writeFileSync(join(config.out, 'figure-best.svg'), renderFigure(groups, 'best'));
  writeFileSync(join(config.out, 'best-digits.svg'), bestDigits(reported, config.methods));
  process.stdout.write(md);
  if (failures > 0) process.exitCode = 1;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * The median over seeds of the regret −log p(c | x̂) of the best point after n evaluations, and the
 * seeds whose best point the classifier gives p(c | x̂) ≥ 0.99 (every method gets there on most seeds,
 * so the regret's order of magnitude is what tells them apart).
 */
function medianTable(groups: readonly Group[], records: readonly RunRecord[]): string[] {
  const head = CHECKPOINTS.map((n) => `median@${n}`).join(' | ');
  const out = ['## Median regret −log p(c | decoded best point) over seeds', '', `| task | method | ${head} | p ≥ 0.99@${CHECKPOINTS.at(-1)} |`, `|---|---|${CHECKPOINTS.map(() => '---').join('|')}|---|`];
  for (const g of [...groups].sort((a, b) => a.fn.localeCompare(b.fn) || a.method.localeCompare(b.method))) {
    const runs = records.filter((r) => r.function === g.fn && r.method === g.method);
    const bestAt = (r: RunRecord, n: number): number => Math.min(...r.values.slice(0, n));
    const cells = CHECKPOINTS.map((n) => (statAt(g.best, n) ? median(runs.map((r) => bestAt(r, n))).toExponential(1) : '–'));
    const last = CHECKPOINTS.at(-1)!;
    const sure = runs.filter((r) => Math.exp(-bestAt(r, last)) >= 0.99).length;
    out.push(`| ${taskLabel(g.fn, g.dim)} | ${g.method} | ${cells.join(' | ')} | ${sure}/${runs.length} |`);
  }
  return out;
}

/** Per class, the decoded best point of each method's best run (captioned with its regret −log p(c | x̂)). */
function bestDigits(records: readonly RunRecord[], methods: readonly string[]): string {
  const w = loadWeights();
  const images: number[][] = [];
  const captions: string[] = [];
  for (const task of LATENT_TASKS) {
    for (const m of methods) {
      const runs = records.filter((r) => r.function === task.name && r.method === m && r.best_x);
      if (runs.length === 0) continue;
      const best = runs.reduce((a, b) => (Math.min(...b.values) < Math.min(...a.values) ? b : a));
      images.push(decode(w, best.best_x!));
      captions.push(`${task.name.replace('latent-digit-', '')}: ${m} −log p=${Math.min(...best.values).toExponential(0)}`);
    }
  }
  return digitGridSvg(images, Math.max(1, methods.length), captions);
}

main().catch((e: unknown) => {
  const known = e instanceof UsageError;
  process.stderr.write(`${known ? (e as Error).message : e instanceof Error ? e.stack : String(e)}\n`);
  process.exitCode = known ? 2 : 1;
});
