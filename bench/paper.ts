/**
 * The paper's benchmark (ALGORITHM.md §7) and other experiments over the same loop.
 *
 *   npm run bench:paper                              # all registered methods, paper protocol
 *   npm run bench:paper -- --methods cmaes,random --seeds 15 --out bench-results/baselines
 *   npm run bench:paper -- --functions cartpole --profile paper
 *
 * Writes to --out: runs.jsonl (one line per run), results.md (tables, with the paper's values),
 * figure-best.svg and figure-paper.svg (ln mean regret vs evaluations), config.json.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { aggregate } from './lib/aggregate.js';
import { expandJobs, parseConfig, UsageError } from './lib/args.js';
import { runPool } from './lib/pool.js';
import { currentProvenance, describeProvenance, type Provenance } from './lib/provenance.js';
import { Progress } from './lib/progress.js';
import { openRunLog, replyCollector } from './lib/run-log.js';
import { renderReport } from './lib/report.js';
import type { RunRecord, RunSpec } from './lib/run.js';
import { renderFigure } from './lib/svg.js';

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const config = parseConfig(argv);
  const provenance = currentProvenance(`npm run bench:paper -- ${argv.join(' ')}`.trim());
  const log = openRunLog<RunRecord & { provenance?: Provenance }>(config.out, config.resume, (r) => Array.isArray(r.values));
  const kept = log.kept;
  const done = new Set(kept.map(runKey));
  const jobs = expandJobs(config).filter((j) => !done.has(runKey({ method: j.method, function: j.fn, dim: j.dim, seed: j.seed })));
  writeFileSync(join(config.out, 'config.json'), `${JSON.stringify({ argv, provenance, ...config }, null, 2)}\n`);
  process.stderr.write(`${jobs.length} runs (${config.methods.join(', ')} × ${config.tasks.length} tasks × ${config.seeds} seeds) on ${config.workers} workers → ${config.out}\n`);
  const records: (RunRecord & { provenance?: Provenance })[] = [...kept];
  const progress = new Progress(jobs.length);
  const collector = replyCollector(log, records, provenance, (spec: RunSpec) => ({
    ids: { method: spec.method, function: spec.fn, dim: spec.dim, seed: spec.seed },
    label: `${spec.method} ${spec.fn} ${spec.dim}-D seed ${spec.seed}`,
  }), (ok) => progress.tick(ok));
  await runPool(jobs, config.workers, collector.take);
  const failures = collector.failures();

  const groups = aggregate(records);
  const md = renderReport(groups, {
    command: provenance.command,
    origin: describeProvenance(records.map((r) => r.provenance)),
    seeds: config.seeds,
    budget: config.budget,
    batch: config.batch,
    prior: config.priorMean === null && config.priorStd === null ? 'N(−1, I) (tasks with their own prior use it)' : `N(${config.priorMean ?? -1}, ${config.priorStd ?? 1}²I)`,
    options: JSON.stringify(config.options),
    failures,
  });
  writeFileSync(join(config.out, 'results.md'), md);
  writeFileSync(join(config.out, 'figure-best.svg'), renderFigure(groups, 'best'));
  writeFileSync(join(config.out, 'figure-paper.svg'), renderFigure(groups, 'paper'));
  process.stdout.write(md);
  if (failures > 0) process.exitCode = 1;
}

function runKey(r: Pick<RunRecord, 'method' | 'function' | 'dim' | 'seed'>): string {
  return `${r.method}/${r.function}/${r.dim}/${r.seed}`;
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof UsageError ? e.message : e instanceof Error ? e.stack : String(e)}\n`);
  process.exitCode = e instanceof UsageError ? 2 : 1;
});
