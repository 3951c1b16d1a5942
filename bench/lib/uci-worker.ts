/**
 * Worker-thread entry of bench/uci.ts: builds each data set's task once (SVR fit and prior fit), then
 * answers every job with its run record, or with the error so that one failing run is reported
 * instead of ending the benchmark.
 */
import { parentPort } from 'node:worker_threads';
import type { JobReply } from './run-log.js';
import { runUciOne, type UciRunRecord, type UciRunSpec } from './uci-run.js';
import { buildUciTask, type UciTask } from './uci-task.js';

export type UciWorkerReply = JobReply<UciRunRecord, UciRunSpec>;

if (!parentPort) throw new Error('bench/lib/uci-worker.ts must run inside a worker thread');
const port = parentPort;
const tasks = new Map<string, Promise<UciTask>>();
port.on('message', (spec: UciRunSpec) => {
  let task = tasks.get(spec.dataset);
  if (!task) tasks.set(spec.dataset, (task = buildUciTask(spec.dataset)));
  task
    .then((t): UciWorkerReply => ({ ok: true, record: runUciOne(spec, t) }))
    .catch((e: unknown): UciWorkerReply => ({ ok: false, spec, error: e instanceof Error ? (e.stack ?? e.message) : String(e) }))
    .then((reply) => port.postMessage(reply));
});
