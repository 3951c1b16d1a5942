/**
 * The paper's Swimmer-v4 experiment (appendix "Locomotion Tasks"): a 16-D linear policy for MuJoCo's
 * three-link swimmer, prior N(0, 9I), bounds [−5, 5]^16, driven through the same runner as
 * bench:paper (bench/lib: worker pool, run loop, runs.jsonl), 15 seeds, q = 3, 153 evaluations.
 *
 *   npm run bench:swimmer                                    # the paper's nine methods
 *   npm run bench:swimmer -- --methods prob-cmaes,cmaes,random --seeds 15 --workers 1
 *
 * Takes bench:paper's options except --functions. Needs MuJoCo (Debian: libmujoco-dev) and cc;
 * the rollout program is compiled on first use (npm run build:swimmer).
 * Writes to --out (default bench-results/swimmer): runs.jsonl, results.md (best return vs
 * evaluations), figure-swimmer.svg (best return, and the paper's scoring), config.json.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expandJobs, parseConfig, UsageError } from './lib/args.js';
import { runPool } from './lib/pool.js';
import { Progress } from './lib/progress.js';
import { currentProvenance, describeProvenance, type Provenance } from './lib/provenance.js';
import type { RunRecord, RunSpec } from './lib/run.js';
import { openRunLog, replyCollector } from './lib/run-log.js';
import { MissingMujocoError, rolloutBinary } from './swimmer/build.js';
import { groupReturns, renderSwimmerFigure, renderSwimmerReport } from './swimmer/report.js';
import { SWIMMER_EPISODES, SWIMMER_SEED } from './swimmer/task.js';

type Logged = RunRecord & { provenance?: Provenance };

/** The methods of the paper's figure (ProbNES variants, their ES counterparts, πBO, BO, random). */
const PAPER_METHODS = 'prob-cmaes,prob-xnes,prob-snes,cmaes,xnes,snes,pibo,bo,random';

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.some((a) => a === '--functions' || a.startsWith('--functions='))) throw new UsageError('bench:swimmer runs the swimmer task only: drop --functions (bench:paper takes --functions swimmer too)');
  // bench:paper's parser, with this experiment's defaults in front (a later option wins).
  const config = parseConfig(['--functions', 'swimmer', '--methods', PAPER_METHODS, '--out', 'bench-results/swimmer', ...argv]);
  rolloutBinary(); // compile now, so a missing MuJoCo stops here with its message instead of failing every run
  const provenance = currentProvenance(`npm run bench:swimmer -- ${argv.join(' ')}`.trim());
  const log = openRunLog<Logged>(config.out, config.resume, (r) => Array.isArray(r.values));
  const done = new Set(log.kept.map((r) => `${r.method}/${r.seed}`));
  // Seed-major order: a run stopped early (then --resume) has every method on the same first seeds.
  const jobs = expandJobs(config)
    .filter((j) => !done.has(`${j.method}/${j.seed}`))
    .sort((a, b) => a.seed - b.seed);
  writeFileSync(join(config.out, 'config.json'), `${JSON.stringify({ argv, provenance, ...config }, null, 2)}\n`);
  process.stderr.write(`${jobs.length} runs (${config.methods.join(', ')} × ${config.seeds} seeds) on ${config.workers} workers → ${config.out}\n`);
  const records: Logged[] = [...log.kept];
  const progress = new Progress(jobs.length);
  const collector = replyCollector(log, records, provenance, (spec: RunSpec) => ({
    ids: { method: spec.method, function: spec.fn, dim: spec.dim, seed: spec.seed },
    label: `${spec.method} seed ${spec.seed}`,
  }), (ok) => progress.tick(ok));
  await runPool(jobs, config.workers, collector.take);
  const failures = collector.failures();

  // The report covers this invocation's methods and seeds, whatever else an earlier one left in the log.
  const reported = records.filter((r) => config.methods.includes(r.method) && r.seed < config.seeds);
  const groups = groupReturns(reported);
  const commands = [...new Set(reported.map((r) => r.provenance?.command).filter((c): c is string => !!c))];
  const md = renderSwimmerReport(groups, {
    command: (commands.length > 0 ? commands : [provenance.command]).join('` then `'),
    origin: describeProvenance(reported.map((r) => r.provenance)),
    protocol:
      `Seeds ${config.seeds}, budget ${config.budget}, batch q = ${config.batch}, prior N(0, 3²I) over the 16 weights, ` +
      `points clipped to [−5, 5]^16 (also the BO/πBO box), options ${JSON.stringify(config.options)}; ` +
      `${SWIMMER_EPISODES} fixed start state per evaluation (Gymnasium's U(−0.1, 0.1) reset noise drawn once, seed ${SWIMMER_SEED}).`,
    failures,
  });
  writeFileSync(join(config.out, 'results.md'), md);
  writeFileSync(join(config.out, 'figure-swimmer.svg'), renderSwimmerFigure(groups));
  process.stdout.write(md);
  if (failures > 0) process.exitCode = 1;
}

main().catch((e: unknown) => {
  const known = e instanceof UsageError || e instanceof MissingMujocoError;
  process.stderr.write(`${known ? (e as Error).message : e instanceof Error ? e.stack : String(e)}\n`);
  process.exitCode = known ? 2 : 1;
});
