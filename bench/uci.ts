/**
 * The paper's UCI experiment (§5.2, appendix "UCI Experiments") on the data sets in bench/data/uci:
 * an RBF ε-SVR fitted to a regression data set, the prior fitted to its standardised inputs by the
 * service's `prior: {from_points}`, and the surrogate maximised (bench/lib/uci-task.ts).
 *
 *   npm run bench:uci
 *   npm run bench:uci -- --methods cmaes,random --datasets concrete --seeds 3 --out bench-results/uci-try
 *   npm run bench:uci -- --methods bo,pibo --seeds 5 --resume      # add runs to an earlier output
 *
 * Writes to --out: runs.jsonl (one line per run), results.md (per data set and method, mean ± SE of the
 * best surrogate value at 30, 75, 150 evaluations and at the budget), figure-uci.svg, config.json.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { isMethodName, type MethodName } from '../src/engine/index.js';
import { registeredMethods } from '../src/engine/strategies/registry.js';
import { runPool } from './lib/pool.js';
import { Progress } from './lib/progress.js';
import { currentProvenance, describeProvenance, type Provenance } from './lib/provenance.js';
import { openRunLog, replyCollector } from './lib/run-log.js';
import { UCI_DATASETS } from './lib/uci-data.js';
import { parseUciConfig, uciJobs, UciUsageError, type UciConfig } from './lib/uci-args.js';
import { aggregateUci, renderUciFigure, renderUciReport, type UciDatasetSummary } from './lib/uci-report.js';
import type { UciRunRecord, UciRunSpec } from './lib/uci-run.js';
import { buildUciTask, defaultSvrParams } from './lib/uci-task.js';
import type { UciWorkerReply } from './lib/uci-worker.js';

type Logged = UciRunRecord & { provenance?: Provenance };

async function summarise(dataset: string): Promise<UciDatasetSummary> {
  const task = await buildUciTask(dataset);
  const paper = UCI_DATASETS[dataset].paper;
  const source = task.prior.source;
  return {
    dataset,
    dim: task.dim,
    rows: task.z.length,
    paper: 'is' in paper ? `The paper's ${paper.is}` : `Stands in for the paper's ${paper.substitutesFor}`,
    dataMax: Math.max(...task.data.y),
    surrogateDataMax: Math.max(...task.z.map((z) => task.surrogate(z))),
    atPriorMean: task.surrogate(task.prior.mean),
    shrinkage: source?.from === 'points' ? source.shrinkage : NaN,
    supportVectors: Number(/total_sv (\d+)/.exec(task.svr.modelText())?.[1] ?? NaN),
  };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const config: UciConfig = parseUciConfig(argv, registeredMethods(), (m): m is MethodName => isMethodName(m));
  const provenance = currentProvenance(`npm run bench:uci -- ${argv.join(' ')}`.trim());
  const log = openRunLog<Logged>(config.out, config.resume, (r) => Array.isArray(r.values) && typeof r.dataset === 'string');
  const key = (r: { method: string; dataset: string; seed: number }): string => `${r.method}/${r.dataset}/${r.seed}`;
  const done = new Set(log.kept.map(key));
  const jobs = uciJobs(config).filter((j) => !done.has(key(j)));
  writeFileSync(join(config.out, 'config.json'), `${JSON.stringify({ argv, provenance, ...config }, null, 2)}\n`);
  process.stderr.write(`${jobs.length} runs (${config.methods.join(', ')} × ${config.datasets.join(', ')} × ${config.seeds} seeds) on ${config.workers} workers → ${config.out}\n`);

  const records: Logged[] = [...log.kept];
  const progress = new Progress(jobs.length);
  const collector = replyCollector(log, records, provenance, (spec: UciRunSpec) => ({
    ids: { method: spec.method, dataset: spec.dataset, seed: spec.seed },
    label: `${spec.method} ${spec.dataset} seed ${spec.seed}`,
  }), (ok) => progress.tick(ok));
  const t0 = performance.now();
  await runPool<UciRunSpec, UciWorkerReply>(jobs, config.workers, collector.take, new URL('./lib/uci-worker.ts', import.meta.url));
  const failures = collector.failures();
  const wallSeconds = (performance.now() - t0) / 1000;

  const groups = aggregateUci(records);
  const summaries = await Promise.all([...new Set(records.map((r) => r.dataset))].map(summarise));
  const commands = [...new Set(records.map((r) => r.provenance?.command).filter((c): c is string => !!c))];
  const svr = defaultSvrParams(1);
  const md = renderUciReport(groups, summaries, {
    command: (commands.length > 0 ? commands : [provenance.command]).join('` then `'),
    origin: describeProvenance(records.map((r) => r.provenance)),
    seeds: config.seeds,
    budget: config.budget,
    batch: config.batch,
    svr: `libsvm ε-SVR, RBF kernel, C = ${svr.C}, ε = ${svr.epsilon}, γ = 1/d on standardised inputs and target (scikit-learn SVR's defaults)`,
    failures,
    wallSeconds: log.kept.length === 0 ? wallSeconds : null,
  });
  writeFileSync(join(config.out, 'results.md'), md);
  writeFileSync(join(config.out, 'figure-uci.svg'), renderUciFigure(groups));
  process.stdout.write(md);
  if (failures > 0) process.exitCode = 1;
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof UciUsageError ? e.message : e instanceof Error ? e.stack : String(e)}\n`);
  process.exitCode = e instanceof UciUsageError ? 2 : 1;
});
