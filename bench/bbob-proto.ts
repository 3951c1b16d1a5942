/**
 * Prototypes of prob-cmaes's first generations (bench/lib/bbob-proto.ts) on BBOB, measured beside the
 * published peer runs:
 *
 *   npx tsx bench/bbob-proto.ts --variants base,stencil,stencil+early,bigfirst --dims 2,5 \
 *     --peers bench-results/published/2026-11-26-bbob-peers/runs.jsonl.gz --out bench-results/bbob-proto
 *
 * A variant is `base` (prob-cmaes as it is) or flags joined by '+' (stencil, bigfirst, early,
 * elitist, …; Powell's model: mfn, solo, sync, handoff, …; PROTO_FLAGS in bench/lib/bbob-proto.ts);
 * --options '{"k":v}' passes prob-cmaes options to every variant. --peers adds the runs of other
 * variants (e.g. bobyqa, newuoa, lq-cmaes) from a runs.jsonl(.gz) to the report.
 * Writes runs.jsonl, results.md and ecdf-<d>D.svg to --out. One run at a time (nice it).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { UsageError } from './lib/args.js';
import { expandBbobJobs, parseBbobConfig } from './lib/bbob-args.js';
import { PROTO_FLAGS, runProto, type ProtoFlag } from './lib/bbob-proto.js';
import { renderBbobReport } from './lib/bbob-report.js';
import { ecdfPoints, toBbobRecord, type BbobRunRecord } from './lib/bbob-score.js';
import { Progress } from './lib/progress.js';
import { openRunLog } from './lib/run-log.js';
import { currentProvenance, describeProvenance } from './lib/provenance.js';
import { renderEcdf } from './lib/svg.js';

function main(): void {
  const argv = process.argv.slice(2);
  const { values: v } = parseArgs({
    args: argv,
    options: {
      variants: { type: 'string' }, dims: { type: 'string' }, functions: { type: 'string' }, instances: { type: 'string' },
      'budget-per-dim': { type: 'string' }, options: { type: 'string' }, peers: { type: 'string' }, out: { type: 'string' }, resume: { type: 'boolean' },
    },
    strict: true,
  });
  const variants = (v.variants ?? 'base,stencil').split(',').map((s) => s.trim()).filter(Boolean).map((label) => {
    const flags = label === 'base' ? [] : label.split('+');
    for (const f of flags) if (!(PROTO_FLAGS as readonly string[]).includes(f)) throw new UsageError(`--variants: unknown flag ${f}; known: ${PROTO_FLAGS.join(', ')}`);
    return { label: label === 'base' ? 'prob-cmaes' : `prob-cmaes+${label}`, flags: flags as ProtoFlag[] };
  });
  const common = ['--methods', 'prob-cmaes', '--dims', v.dims ?? '2,5', '--functions', v.functions ?? '1-24', '--instances', v.instances ?? '1-5', '--budget-per-dim', v['budget-per-dim'] ?? '2,5,10,20,50', ...(v.options ? ['--options', v.options] : [])];
  const config = parseBbobConfig(common);
  const out = v.out ?? 'bench-results/bbob-proto';
  const provenance = currentProvenance(`npx tsx bench/bbob-proto.ts ${argv.join(' ')}`.trim());
  const log = openRunLog<BbobRunRecord>(out, v.resume === true, (r) => Array.isArray(r.trajectory));
  const done = new Set(log.kept.map((r) => `${r.variant}/${r.fn}/${r.dim}/${r.instance}`));
  const base = expandBbobJobs(config);
  const jobs = variants.flatMap((variant) => base.map((j) => ({ ...j, variant: { ...j.variant, label: variant.label }, flags: variant.flags }))).filter((j) => !done.has(`${j.variant.label}/${j.fn}/${j.dim}/${j.instance}`));
  const records: BbobRunRecord[] = [...log.kept];
  const progress = new Progress(jobs.length);
  for (const j of jobs) {
    const s = j.spec!;
    const r = runProto({ method: s.method, options: s.options, flags: j.flags, fn: j.fn, dim: j.dim, instance: j.instance, budget: j.budget, batch: s.batch, tag: j.variant.label });
    const rec = toBbobRecord(j, r, config.budgetPerDim, provenance);
    records.push(rec);
    log.append(rec);
    progress.tick(true);
  }
  const peers: BbobRunRecord[] = v.peers
    ? (v.peers.endsWith('.gz') ? gunzipSync(readFileSync(v.peers)).toString('utf8') : readFileSync(v.peers, 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as BbobRunRecord)
      .filter((r) => config.dims.includes(r.dim) && config.functions.includes(r.fn) && config.instances.includes(r.instance))
    : [];
  const peerVariants = [...new Set(peers.map((r) => r.variant))];
  const runs = [...records, ...peers];
  const labels = [...variants.map((x) => x.label), ...peerVariants.filter((p) => !variants.some((x) => x.label === p))];
  const md = renderBbobReport(runs, {
    header: [`Command: \`${provenance.command}\``, describeProvenance(records.map((r) => r.provenance)), v.peers ? `Peer runs from ${v.peers} (their own commit and command are in that file).` : '', `Load average at the end: ${loadavg().map((l) => l.toFixed(1)).join(', ')}.`],
    budgetPerDim: config.budgetPerDim, variants: labels, failures: 0,
  });
  writeFileSync(join(out, 'results.md'), md);
  for (const d of config.dims) {
    const series = labels.map((l) => ({ label: l, method: runs.find((r) => r.variant === l)?.method ?? 'prob-cmaes', points: ecdfPoints(runs.filter((r) => r.variant === l && r.dim === d)) }));
    writeFileSync(join(out, `ecdf-${d}D.svg`), renderEcdf(series, `BBOB prototypes, d = ${d}`, config.budgetPerDim[config.budgetPerDim.length - 1], d, config.budgetPerDim));
  }
  process.stdout.write(md.split('\n## d = ')[0]);
}

try {
  main();
} catch (e) {
  process.stderr.write(`${e instanceof UsageError ? e.message : e instanceof Error ? e.stack : String(e)}\n`);
  process.exitCode = e instanceof UsageError ? 2 : 1;
}
