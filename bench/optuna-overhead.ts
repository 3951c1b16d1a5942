/**
 * The Optuna bridge's own time per trial (probnes_client.optuna.ProbnesSampler) against Optuna's TPE
 * on objectives that cost nothing (`quadratic`, four numeric parameters; `svc`, a define-by-run space
 * with conditional and stepped parameters): starts the server, runs bench/optuna-overhead.py under
 * Debian's python3-optuna (/usr/bin/python3), and prints the median and 90th percentile per objective
 * and sampler, with the bridge's startup trials and the parameters it drew independently after them.
 *
 *   npm run bench:optuna-overhead -- [--trials 60] [--seeds 3] [--methods prob-cmaes,bo] [--objectives quadratic,svc] [--out DIR]
 *
 * A trial's time is the wall time of every call Optuna made to its sampler (infer_relative_search_space,
 * sample_relative, sample_independent, after_trial); the first trial (no space yet, no server call) is
 * left out. For the bridge it is mostly its HTTP requests (a suggestion and an observation per trial)
 * and the server's work behind them, so it depends on the machine's load, which results.md records.
 * --out DIR: DIR/results.md and DIR/runs.jsonl.gz (one record per trial).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os, { loadavg } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startServer } from '../test/helpers/server-process.js';
import { currentProvenance, writePublished } from './lib/provenance.js';

const { values: argv } = parseArgs({
  options: {
    trials: { type: 'string', default: '60' },
    seeds: { type: 'string', default: '3' },
    methods: { type: 'string', default: 'prob-cmaes,bo' },
    objectives: { type: 'string', default: 'quadratic,svc' },
    out: { type: 'string' },
  },
});

interface Row {
  objective: string; sampler: string; seed: number; trial: number; ms: number; relative_ms: number; independent_ms: number; after_ms: number;
  requests: number | null;
  /** Parameters drawn by the sampler's sample_independent in this trial. */
  independent: number;
  /** The bridge: whether the server handed out the trial's point (null for TPE). */
  served: boolean | null;
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

async function main(): Promise<void> {
  const started = new Date();
  const loadStart = loadavg();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-optuna-overhead-'));
  const server = await startServer(path.join(tmp, 'bench.db'), { env: { ENGINE_WORKERS: '1', RATE_LIMIT_PER_MINUTE: '0' }, stderr: 'inherit' });
  let out = '';
  try {
    const script = path.join(import.meta.dirname, 'optuna-overhead.py');
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn('/usr/bin/python3', [script, '--url', server.base, '--trials', argv.trials!, '--seeds', argv.seeds!, '--methods', argv.methods!, '--objectives', argv.objectives!], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } });
      child.stdout.on('data', (d) => (out += d));
      child.on('close', resolve);
    });
    if (code !== 0) throw new Error(`bench/optuna-overhead.py exited with ${code}`);
  } finally {
    await server.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  const rows = out.trim().split('\n').map((l) => JSON.parse(l) as Row);
  const printed = [
    `${argv.seeds} seeds × ${argv.trials} trials per objective and sampler, the first trial of each run left out; times in ms per trial.`,
    'Startup trials: the bridge\'s trials before its first server point (median over the seeds). Independent after startup: the',
    'parameters the bridge drew with its independent sampler in the trials from its first server point on (its fallback), in all.',
    '',
    '| objective | sampler | trials | median | p90 | max | median of sample_relative (+ infer) | median of sample_independent | median of after_trial | HTTP requests per trial | startup trials | independent after startup |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const objective of [...new Set(rows.map((r) => r.objective))]) {
    for (const name of [...new Set(rows.map((r) => r.sampler))]) {
      const all = rows.filter((r) => r.objective === objective && r.sampler === name);
      const mine = all.filter((r) => r.trial > 0);
      if (!mine.length) continue;
      const ms = mine.map((r) => r.ms);
      const req = mine.map((r) => r.requests).filter((x): x is number => x !== null);
      let startup = '–';
      let fallback = '–';
      if (all.some((r) => r.served !== null)) {
        const seeds = [...new Set(all.map((r) => r.seed))];
        const firsts = seeds.map((s) => Math.min(...all.filter((r) => r.seed === s && r.served).map((r) => r.trial)));
        startup = String(median(firsts));
        fallback = String(seeds.reduce((n, s, k) => n + all.filter((r) => r.seed === s && r.trial >= firsts[k]!).reduce((m, r) => m + r.independent, 0), 0));
      }
      printed.push(`| ${objective} | ${name} | ${mine.length} | ${median(ms).toFixed(1)} | ${quantile(ms, 0.9).toFixed(1)} | ${Math.max(...ms).toFixed(1)} | ${median(mine.map((r) => r.relative_ms)).toFixed(1)} | ${median(mine.map((r) => r.independent_ms)).toFixed(1)} | ${median(mine.map((r) => r.after_ms)).toFixed(1)} | ${req.length ? (req.reduce((a, b) => a + b, 0) / req.length).toFixed(2) : '–'} | ${startup} | ${fallback} |`);
    }
  }
  for (const l of printed) console.log(l);
  if (argv.out) {
    const command = `npm run bench:optuna-overhead -- ${process.argv.slice(2).join(' ')}`.trim();
    const loadDetail = 'the machine was shared with other benchmark runs (2 cores)';
    for (const f of writePublished(argv.out, { title: 'bench:optuna-overhead', provenance: currentProvenance(command), started, loadStart, printed, records: rows, loadDetail })) console.log(`wrote ${f}`);
  }
}

await main();
