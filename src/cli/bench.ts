/**
 * `probnes bench [runner options]`: the paper benchmark, or any subset of it. The runner lives in
 * bench/paper.ts (outside src/, next to its worker pool, report and figures); this command runs it in
 * a child Node with tsx and passes the options through untouched, so there is one runner and one
 * option parser. The only thing added is a fresh --out directory when none is given, so a quick run
 * never overwrites the results of an earlier one.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { CliIo } from './common.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** Under dist/ (the compiled server, e.g. the Docker image) ROOT is dist/, and there is no bench/. */
/** tsx's loader by absolute URL, so the runner starts from any working directory. */
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const RUNNER = [path.join(ROOT, 'bench/paper.ts'), path.join(ROOT, '../bench/paper.ts')].find((p) => fs.existsSync(p)) ?? null;

export const BENCH_USAGE = `usage: probnes bench [options]

Runs the paper's benchmark (every method × the paper's test functions × 15 seeds × 153 evaluations)
or a subset of it, in worker threads, and writes runs.jsonl, results.md (tables with the paper's
values) and two SVG figures to the output directory; the tables also go to stdout. The options are
those of bench/paper.ts (below), passed through as they are. Without --out, results go to a new
directory bench-results/cli-<date>-<time>, so earlier results are never overwritten.

examples:
  probnes bench --methods prob-cmaes,cmaes --functions branin --seeds 3
  probnes bench --methods prob-cmaes --functions branin,levy:2 --seeds 2 --budget 30 --out /tmp/quick
  probnes bench --profile paper --out bench-results/paper      # the full protocol (hours on 2 cores)
`;

function stamp(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
}

/** Runs the runner; resolves with its exit code. Output is streamed (a full run prints progress for hours). */
function runRunner(args: string[], io: CliIo, capture: boolean): Promise<{ code: number; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', TSX, RUNNER!, ...args], {
      cwd: io.cwd ?? process.cwd(),
      env: io.env,
      stdio: io.inheritStdio && !capture ? 'inherit' : ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stdout?.on('data', (b: Buffer) => io.out(b.toString()));
    child.stderr?.on('data', (b: Buffer) => {
      if (capture) err += b.toString();
      else io.err(b.toString());
    });
    child.on('error', reject);
    // A child killed by a signal (Ctrl-C reaches the whole process group) reports as 128 + number.
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 128 + (signal === 'SIGINT' ? 2 : 15) : 1), err }));
  });
}

/**
 * The runner's usage text: from the compiled copy next to this module when it runs from the bundle
 * of bin/cli-build.js (no TypeScript loader there), else from the source under tsx.
 */
async function runnerUsage(): Promise<string> {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const manifest = path.join(here, 'manifest.json');
  const compiled = fs.existsSync(manifest) ? (JSON.parse(fs.readFileSync(manifest, 'utf8')) as { benchArgs?: string }).benchArgs : undefined;
  const url = compiled ? pathToFileURL(path.join(here, compiled)).href : pathToFileURL(path.join(ROOT, 'bench/lib/args.ts')).href;
  return ((await import(url)) as { USAGE: string }).USAGE;
}

export async function runBench(argv: string[], io: CliIo): Promise<number> {
  const help = argv.includes('--help') || argv.includes('-h');
  if (RUNNER === null) {
    if (help) io.out(BENCH_USAGE);
    io.err('probnes bench: bench/paper.ts is not here (this is a compiled build without the benchmark sources); run it from a checkout of the repository\n');
    return help ? 0 : 1;
  }
  if (help) {
    // The runner's own option list (bench/lib/args.ts), so the two can never disagree.
    io.out(`${BENCH_USAGE}\nrunner options (bench/paper.ts):\n${(await runnerUsage()).replace(/^usage:.*\n/, '')}\n`);
    return 0;
  }
  const hasOut = argv.some((a) => a === '--out' || a.startsWith('--out='));
  const args = hasOut ? argv : [...argv, '--out', path.join('bench-results', `cli-${stamp(new Date())}`)];
  const r = await runRunner(args, io, false);
  if (r.code === 2) io.err('(see probnes bench --help)\n');
  return r.code;
}
