/**
 * COCO's BBOB noiseless suite (src/engine/benchmarks/bbob.ts) over the engine loop of bench:paper:
 * every method variant × function × dimension × instance, one generation per ask, each run to the
 * largest budget and scored at every budget from its trajectory (lib/bbob-score.ts).
 *
 *   npm run bench:bbob -- --methods prob-cmaes,prob-cmaes:paper,cmaes,random --dims 2,5 --budget-per-dim 10,50 --out bench-results/bbob
 *   npm run bench:bbob -- --methods bo --dims 10 --functions 1-24 --instances 1-5 --workers 1 --resume --out bench-results/bbob
 *   npm run bench:bbob -- --methods cmaes,bo --dims 2,5 --report-only --out bench-results/bbob   # tables from runs.jsonl only
 *   npm run bench:bbob -- --methods prob-cmaes,lq-cmaes,bobyqa,newuoa --dims 2,5 --workers 1 --out bench-results/bbob-peers
 *
 * bobyqa and newuoa are external peers (Powell's methods through NLopt, bench/lib/bbob-peers.ts): each
 * run is a /usr/bin/python3 child that proposes points and gets the project's BBOB values back; they
 * run after the service methods, `--workers` at a time.
 *
 * Writes to --out: runs.jsonl (one line per run: the best-so-far f − f_opt trajectory, effective
 * options, commit and command), results.md (lib/bbob-report.ts), ecdf-<d>D.svg (one per dimension).
 * Progress on stderr.
 */
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { UsageError } from './lib/args.js';
import { expandBbobJobs, jobKey, parseBbobConfig } from './lib/bbob-args.js';
import { renderBbobReport, renderDeclaredBudget } from './lib/bbob-report.js';
import { runPeerBbob } from './lib/bbob-peers.js';
import { ecdfPoints, toBbobRecord, type BbobRunRecord } from './lib/bbob-score.js';
import { runPool } from './lib/pool.js';
import { Progress } from './lib/progress.js';
import { openRunLog } from './lib/run-log.js';
import { currentProvenance, describeProvenance } from './lib/provenance.js';
import { renderEcdf } from './lib/svg.js';

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const config = parseBbobConfig(argv);
  const provenance = currentProvenance(`npm run bench:bbob -- ${argv.join(' ')}`.trim());
  const log = openRunLog<BbobRunRecord>(config.out, config.resume, (r) => Array.isArray(r.trajectory));
  const all = expandBbobJobs(config);
  const wanted = new Set(all.map((j) => jobKey({ variant: j.variant.label, fn: j.fn, dim: j.dim, instance: j.instance, budget: j.budget })));
  // --resume keeps every finished run in the file (also of other variants), and reruns only what is missing.
  const kept = log.kept;
  const done = new Set(kept.map((r) => jobKey({ ...r, budget: r.budget })));
  const jobs = config.reportOnly ? [] : all.filter((j) => !done.has(jobKey({ variant: j.variant.label, fn: j.fn, dim: j.dim, instance: j.instance, budget: j.budget })));
  writeFileSync(join(config.out, 'config.json'), `${JSON.stringify({ argv, provenance, ...config }, null, 2)}\n`);
  process.stderr.write(`${jobs.length} runs (${config.variants.map((v) => v.label).join(', ')} × f${config.functions.join(',f')} × d ${config.dims.join(',')} × instances ${config.instances.join(',')}) on ${config.workers} workers → ${config.out}\n`);

  const serviceJobs = jobs.filter((j) => j.spec !== null), peerJobs = jobs.filter((j) => j.peer !== null);
  const byTag = new Map(serviceJobs.map((j) => [`${j.variant.label}/${j.spec!.fn}/${j.dim}/${j.instance}`, j]));
  const records: BbobRunRecord[] = [...kept];
  let failures = 0;
  const progress = new Progress(jobs.length);
  await runPool(serviceJobs.map((j) => j.spec!), config.workers, (reply) => {
    if (reply.ok) {
      const job = byTag.get(`${reply.record.tag}/${reply.record.function}/${reply.record.dim}/${reply.record.instance}`)!;
      const record = toBbobRecord(job, reply.record, config.budgetPerDim, provenance);
      records.push(record);
      log.append(record);
    } else {
      failures++;
      const s = reply.spec;
      log.append({ variant: s.tag, fn: s.fn, dim: s.dim, instance: s.instance, error: reply.error, provenance });
      process.stderr.write(`\nrun failed: ${s.tag} ${s.fn} ${s.dim}-D instance ${s.instance}: ${reply.error.split('\n')[0]}\n`);
    }
    progress.tick(reply.ok);
  });
  // The peers: `workers` child processes at a time, each evaluating the project's function on this side.
  const queue = [...peerJobs];
  await Promise.all(Array.from({ length: Math.min(config.workers, queue.length) }, async () => {
    for (let job = queue.shift(); job; job = queue.shift()) {
      try {
        const r = await runPeerBbob(job.peer!);
        const record: BbobRunRecord = { ...toBbobRecord(job, r, config.budgetPerDim, provenance), peer: { algorithm: r.algorithm, nlopt: r.nlopt, restart_at: r.restart_at } };
        records.push(record);
        log.append(record);
        progress.tick(true);
      } catch (e) {
        failures++;
        const error = e instanceof Error ? e.message : String(e);
        log.append({ variant: job.variant.label, fn: job.fn, dim: job.dim, instance: job.instance, error, provenance });
        process.stderr.write(`\nrun failed: ${job.variant.label} f${job.fn} ${job.dim}-D instance ${job.instance}: ${error.split('\n')[0]}\n`);
        progress.tick(false);
      }
    }
  }));

  const runs = records.filter((r) => wanted.has(jobKey({ ...r, budget: r.budget })));
  // With --declare-budget a service variant is one label per budget (expandBbobJobs).
  const variants = [...new Set(all.map((j) => j.variant.label))];
  const declared = config.declareBudget
    ? renderDeclaredBudget(runs, config.budgetPerDim, config.variants.filter((v) => variants.includes(`${v.label}@${config.budgetPerDim[0]}d`)).map((v) => v.label), config.variants.filter((v) => !variants.includes(`${v.label}@${config.budgetPerDim[0]}d`)).map((v) => v.label))
    : '';
  const md0 = renderBbobReport(runs, {
    header: [
      `Command: \`${provenance.command}\``,
      ...runCommands(runs),
      describeProvenance(runs.map((r) => r.provenance)),
      `Populations: ${[...new Set(runs.map((r) => `${r.variant} ${r.batch} at d = ${r.dim}`))].join(', ')}.`,
      `Load average at the end (1, 5, 15 min): ${loadavg().map((l) => l.toFixed(1)).join(', ')}; times are wall times under that load.`,
    ],
    budgetPerDim: config.budgetPerDim,
    variants,
    failures,
  });
  const md = declared ? md0.replace('\n## Summary', `\n${declared}\n\n## Summary`) : md0;
  writeFileSync(join(config.out, 'results.md'), md);
  const maxPerDim = config.budgetPerDim[config.budgetPerDim.length - 1];
  for (const d of config.dims) {
    const series = variants.map((label) => ({ label, method: all.find((j) => j.variant.label === label)!.variant.method, points: ecdfPoints(runs.filter((r) => r.variant === label && r.dim === d)) }));
    writeFileSync(join(config.out, `ecdf-${d}D.svg`), renderEcdf(series, `BBOB f${config.functions[0]}–f${config.functions[config.functions.length - 1]}, d = ${d}, 11 targets 10^2…10^−8`, maxPerDim, d, config.budgetPerDim));
  }
  process.stdout.write(md);
  if (failures > 0) process.exitCode = 1;
}

/** The commands that produced the runs, when they are not all this invocation's (--resume, --report-only). */
function runCommands(runs: readonly BbobRunRecord[]): string[] {
  const counts = new Map<string, number>();
  for (const r of runs) counts.set(r.provenance.command, (counts.get(r.provenance.command) ?? 0) + 1);
  return counts.size === 0 ? [] : ['Runs produced by:', '', ...[...counts].map(([c, n]) => `- \`${c}\` (${n} runs)`), ''];
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof UsageError ? e.message : e instanceof Error ? e.stack : String(e)}\n`);
  process.exitCode = e instanceof UsageError ? 2 : 1;
});
