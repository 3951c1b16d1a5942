/**
 * Where a benchmark run came from: the git commit of the code that produced it, whether the working
 * tree had uncommitted changes (then the commit alone does not reproduce it), and the exact command.
 * Stored on every runs.jsonl line because `--resume` can mix runs of several invocations in one file.
 */
import { execFileSync } from 'node:child_process';

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
