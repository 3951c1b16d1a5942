/**
 * Worker-thread entry: receives RunSpec jobs one at a time and answers with the run record (or the
 * error, so one failing run is reported instead of killing the whole benchmark).
 */
import { parentPort } from 'node:worker_threads';
import { runOne, type RunSpec } from './run.js';

export type WorkerReply = { ok: true; record: ReturnType<typeof runOne> } | { ok: false; spec: RunSpec; error: string };

if (!parentPort) throw new Error('bench/lib/worker.ts must run inside a worker thread');
const port = parentPort;
port.on('message', (spec: RunSpec) => {
  let reply: WorkerReply;
  try {
    reply = { ok: true, record: runOne(spec) };
  } catch (e) {
    reply = { ok: false, spec, error: e instanceof Error ? (e.stack ?? e.message) : String(e) };
  }
  port.postMessage(reply);
});
