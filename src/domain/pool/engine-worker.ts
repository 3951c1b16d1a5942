/**
 * Worker-thread entry for the engine pool: piscina calls the default export with one task.
 * Errors are returned as data, not thrown, so that a typed engine error keeps its `code` across
 * the thread boundary (structured clone drops custom error classes).
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { isMainThread, workerData } from 'node:worker_threads';
import { EngineError } from '../../engine/index.js';
import { runEngineTask, type EngineResult, type EngineTask } from './engine-tasks.js';

export type WorkerReply =
  | { ok: true; result: EngineResult; ms: number }
  | { ok: false; code: string; message: string; engine: boolean };

// Name the thread (Linux; top -H, /proc/<pid>/task/*/comm) so that its CPU can be told apart from the
// main thread's: bench:load reports the two separately. Elsewhere, or if /proc is read-only, unnamed.
if (!isMainThread) {
  try {
    writeFileSync('/proc/thread-self/comm', 'probnes-engine');
  } catch {
    // not Linux
  }
  // A heavy lane's threads yield the CPU to the event loop and the light lane (fair-runner.ts):
  // on Linux a priority set without a pid applies to the calling thread only. Where it cannot be
  // set (other systems, a sandbox), the thread runs at the process's priority.
  const nice = (workerData as { nice?: unknown } | null)?.nice;
  if (typeof nice === 'number' && os.platform() === 'linux') {
    try {
      os.setPriority(nice);
    } catch {
      // not permitted
    }
  }
}

export default function handle(task: EngineTask): WorkerReply {
  const t0 = performance.now();
  try {
    const result = runEngineTask(task);
    return { ok: true, result, ms: performance.now() - t0 };
  } catch (err) {
    if (err instanceof EngineError) return { ok: false, code: err.code, message: err.message, engine: true };
    const e = err as Error;
    return { ok: false, code: 'engine_failure', message: `${e?.name ?? 'Error'}: ${e?.message ?? String(err)}`, engine: false };
  }
}
