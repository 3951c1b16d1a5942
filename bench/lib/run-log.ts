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

/** A worker's answer to one job: the run's record, or the job and its error. */
export type JobReply<R, S> = { ok: true; record: R } | { ok: false; spec: S; error: string };

/**
 * Takes worker replies as they come: a finished run is kept (with the invocation's provenance) and
 * appended to the log; a failed one is logged as `ids` plus its error, counted, and named on stderr.
 */
export function replyCollector<R extends object, S, P extends object>(
  log: RunLog<R & { provenance?: P }>,
  records: (R & { provenance?: P })[],
  provenance: P,
  failedRun: (spec: S) => { ids: object; label: string },
  tick: (ok: boolean) => void,
): { take: (reply: JobReply<R, S>) => void; failures: () => number } {
  let failures = 0;
  return {
    take: (reply) => {
      if (reply.ok) {
        const record = { ...reply.record, provenance };
        records.push(record);
        log.append(record);
      } else {
        failures++;
        const { ids, label } = failedRun(reply.spec);
        log.append({ ...ids, error: reply.error, provenance });
        process.stderr.write(`\nrun failed: ${label}: ${reply.error.split('\n')[0]}\n`);
      }
      tick(reply.ok);
    },
    failures: () => failures,
  };
}
