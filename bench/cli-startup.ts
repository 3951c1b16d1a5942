/**
 * `npm run bench:cli`: CPU time (user + system, the process and its children) of the `probnes`
 * commands that should answer at once: every --help and `keys list`, against the 0.3 s target.
 * Two ways of running each, in one run so that their ratio is measured under the same load:
 *   bin     node bin/probnes.js …  (the esbuild bundle of bin/cli-build.js; built before timing)
 *   tsx     the TypeScript loader registered in process, then src/cli/main.ts (what bin/probnes.js
 *           did for every command before the bundle)
 * CPU is read from /proc/self/stat (cutime + cstime of waited-for children, Linux), so a command's
 * own child processes count too. Median of --runs runs (default 7).
 *
 * With --out DIR it also writes DIR/results.md (the table) and DIR/runs.jsonl.gz (every timed run).
 *
 *   npm run bench:cli [-- --runs 7] [--out bench-results/published/<date>-cli-startup]
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(ROOT, 'bin/probnes.js');
const TSX_API = pathToFileURL(path.join(path.dirname(createRequire(import.meta.url).resolve('tsx/package.json')), 'dist/esm/api/index.mjs')).href;
const TARGET_S = 0.3;

const COMMANDS: string[][] = [
  ['--help'],
  ['serve', '--help'],
  ['demo', '--help'],
  ['bench', '--help'],
  ['keys', '--help'],
  ['keys', 'create', '--help'],
  ['keys', 'list', '--help'],
  ['keys', 'revoke', '--help'],
  ['backup', '--help'],
  ['keys', 'list'],
];

/** User + system CPU seconds of this process's waited-for children so far (fields 16, 17 of /proc/self/stat). */
function childCpu(): number {
  const stat = fs.readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the command name: field 3 is index 0, so cutime (16) and cstime (17) are at 13 and 14.
  return (Number(fields[13]) + Number(fields[14])) / 100; // clock ticks; 100 per second on Linux
}

function run(mode: 'bin' | 'tsx', argv: string[], env: NodeJS.ProcessEnv): number {
  const args =
    mode === 'bin'
      ? [BIN, ...argv]
      : ['--input-type=module', '-e', `const { register } = await import(${JSON.stringify(TSX_API)}); register(); const { main } = await import(${JSON.stringify(pathToFileURL(path.join(ROOT, 'src/cli/main.ts')).href)}); process.exitCode = await main(process.argv.slice(1));`, '--', ...argv];
  const before = childCpu();
  const r = spawnSync(process.execPath, args, { env, encoding: 'utf8' });
  const cpu = childCpu() - before;
  if (r.status !== 0) throw new Error(`${mode} probnes ${argv.join(' ')} exited ${r.status}: ${r.stderr}`);
  return cpu;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function main(): void {
  const { values } = parseArgs({ options: { runs: { type: 'string', default: '7' }, out: { type: 'string' } } });
  const runs = Number(values.runs);
  if (!fs.existsSync('/proc/self/stat')) throw new Error('bench:cli reads CPU times from /proc (Linux)');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-bench-cli-'));
  const env = { ...process.env, DATABASE_PATH: path.join(tmp, 'keys.db') };
  try {
    // Three keys to list, and the bundle built (the first run after a source change builds it).
    for (const tenant of ['acme', 'beta', 'gamma']) run('bin', ['keys', 'create', '--tenant', tenant], env);
    run('bin', ['--help'], env);
    const lines: string[] = [];
    const say = (l: string) => (console.log(l), lines.push(l));
    const records: { command: string; mode: 'bin' | 'tsx'; run: number; cpu_s: number }[] = [];
    say(`probnes startup CPU (user + system, s), median of ${runs} runs; ${os.cpus().length} CPUs, load average ${os.loadavg()[0]!.toFixed(1)}`);
    say('');
    say('| command | bin (bundle) | tsx | tsx / bin | bin < 0.3 s |');
    say('|---|---|---|---|---|');
    let failed = 0;
    for (const argv of COMMANDS) {
      const bin: number[] = [], tsx: number[] = [];
      for (let i = 0; i < runs; i++) {
        bin.push(run('bin', argv, env));
        tsx.push(run('tsx', argv, env));
        records.push({ command: argv.join(' '), mode: 'bin', run: i, cpu_s: bin[i]! }, { command: argv.join(' '), mode: 'tsx', run: i, cpu_s: tsx[i]! });
      }
      const b = median(bin), t = median(tsx);
      if (b >= TARGET_S) failed++;
      say(`| probnes ${argv.join(' ')} | ${b.toFixed(2)} | ${t.toFixed(2)} | ${(t / Math.max(b, 0.01)).toFixed(1)} | ${b < TARGET_S ? 'yes' : 'NO'} |`);
    }
    say('');
    say(failed === 0 ? `every command under ${TARGET_S} s of CPU` : `${failed} command(s) at or over ${TARGET_S} s of CPU`);
    if (values.out) {
      fs.mkdirSync(values.out, { recursive: true });
      fs.writeFileSync(path.join(values.out, 'results.md'), `${lines.join('\n')}\n`);
      fs.writeFileSync(path.join(values.out, 'runs.jsonl.gz'), gzipSync(records.map((r) => JSON.stringify(r)).join('\n') + '\n'));
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main();
