/**
 * The runs.jsonl of a benchmark's output directory: one JSON line per finished (or failed) run,
 * appended as runs finish. `--resume` keeps the finished runs of an earlier invocation (failed runs,
 * which carry an `error`, are retried) and rewrites the file with them before new runs are appended.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface RunLog<T> {
  /** The finished runs kept from an earlier invocation (none without --resume). */
  kept: T[];
  append(line: object): void;
}

/** Opens <out>/runs.jsonl; `finished` tells a finished run from a failed or foreign line. */
export function openRunLog<T>(out: string, resume: boolean, finished: (r: T & { error?: string }) => boolean): RunLog<T> {
  mkdirSync(out, { recursive: true });
  const file = join(out, 'runs.jsonl');
  const kept =
    resume && existsSync(file)
      ? readFileSync(file, 'utf8')
          .split('\n')
          .filter((line) => line.trim() !== '')
          .map((line) => JSON.parse(line) as T & { error?: string })
          .filter((r) => r.error === undefined && finished(r))
      : [];
  writeFileSync(file, kept.map((r) => `${JSON.stringify(r)}\n`).join(''));
  if (kept.length > 0) process.stderr.write(`resuming: ${kept.length} runs kept from ${file}\n`);
  return { kept, append: (line) => appendFileSync(file, `${JSON.stringify(line)}\n`) };
}
