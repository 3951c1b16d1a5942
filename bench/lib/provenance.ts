/**
 * Where a benchmark run came from: the git commit of the code that produced it, whether the working
 * tree had uncommitted changes (then the commit alone does not reproduce it), and the exact command.
 * Stored on every runs.jsonl line because `--resume` can mix runs of several invocations in one file.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

export interface Provenance {
  /** `git rev-parse HEAD`, or null outside a git checkout. */
  commit: string | null;
  /** True when `git status --porcelain` listed changes to tracked files (untracked files are ignored). */
  dirty: boolean | null;
  /** The command line as typed, e.g. `npm run bench:paper -- --methods bo --seeds 15`. */
  command: string;
}

function git(args: string[]): string | null {
  try {
    return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

export function currentProvenance(command: string): Provenance {
  const commit = git(['rev-parse', 'HEAD']);
  const status = commit === null ? null : git(['status', '--porcelain', '--untracked-files=no']);
  return { commit, dirty: status === null ? null : status !== '', command };
}

/** One line for results.md naming every distinct origin among the runs (one after a plain run). */
export function describeProvenance(all: readonly (Provenance | undefined)[]): string {
  const seen = new Map<string, number>();
  for (const p of all) {
    const key = p === undefined ? 'unrecorded' : `${p.commit ?? 'no git checkout'}${p.dirty ? ' (with uncommitted changes)' : p.dirty === false ? ' (clean tree)' : ''}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  const parts = [...seen].map(([k, n]) => (seen.size === 1 ? k : `${k}: ${n} runs`));
  return `Commit: ${parts.join('; ')}`;
}

/**
 * --out DIR for a script that prints one table: DIR/results.md (a title, the command, the commit and
 * whether the tree was clean, Node, the CPU, the load average at the start and at the end, then the
 * printed lines) and DIR/runs.jsonl.gz (one record per run, each with its provenance). `loadDetail`
 * continues the load line (what else the script read of the load).
 */
export function writePublished(dir: string, out: { title: string; provenance: Provenance; started: Date; loadStart: number[]; printed: string[]; records: object[]; loadDetail?: string }): string[] {
  mkdirSync(dir, { recursive: true });
  const fmt = (l: number[]) => l.map((x) => x.toFixed(2)).join(', ');
  const header = [
    `# ${out.title}`,
    '',
    `Command: \`${out.provenance.command}\``,
    describeProvenance([out.provenance]),
    `Run: ${out.started.toISOString()} – ${new Date().toISOString()}; Node ${process.version}; ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}`,
    `Load average (1, 5, 15 min) at the start: ${fmt(out.loadStart)}; at the end: ${fmt(loadavg())}${out.loadDetail ? `; ${out.loadDetail}` : ''}`,
    '',
  ];
  const files = [join(dir, 'results.md'), join(dir, 'runs.jsonl.gz')];
  writeFileSync(files[0]!, `${[...header, ...out.printed].join('\n')}\n`);
  // A record that carries its own provenance (a run reused from an earlier directory) keeps it.
  const lines = out.records.map((r) => JSON.stringify({ ...r, provenance: (r as { provenance?: Provenance }).provenance ?? out.provenance })).join('\n');
  writeFileSync(files[1]!, gzipSync(Buffer.from(`${lines}\n`), { level: 9 }));
  return files;
}
