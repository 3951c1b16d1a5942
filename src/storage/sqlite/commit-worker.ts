/**
 * The writer thread's side of commit-thread.ts: its own connection to the database file (same
 * pragmas, synchronous=FULL) and the loop's commit unit of work. Commits that queued while the
 * previous transaction was being written are drained and written in one transaction (one fsync
 * for all of them, whichever studies they belong to); each keeps its own outcome through a
 * savepoint. Replies go out only after the transaction's COMMIT returned, and carry the commit's
 * result: the outcome, the revision and the new trials' ids.
 */
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { openDatabase } from './connection.js';
import { TrialsRepo } from './trials-repo.js';
import type { CommitRequest, CommitReply } from './commit-thread.js';

const port = parentPort!;
const { file, busyTimeoutMs } = workerData as { file: string; busyTimeoutMs?: number };
const db = openDatabase(file, busyTimeoutMs === undefined ? {} : { busyTimeoutMs });
const trials = new TrialsRepo(db);

function errorReply(id: number, err: unknown): CommitReply {
  const e = err as { message?: string; code?: unknown };
  return { id, ok: false, message: e?.message ?? String(err), code: typeof e?.code === 'string' ? e.code : null };
}

// Open and prepared: the first commit will not wait for the thread's start.
port.postMessage({ ready: true });

port.on('message', (first: CommitRequest | { close: true }) => {
  if ('close' in first) {
    db.close();
    port.close();
    return;
  }
  const batch: CommitRequest[] = [first];
  let closing = false;
  for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port)) {
    const msg = m.message as CommitRequest | { close: true };
    if ('close' in msg) closing = true;
    else batch.push(msg);
  }
  let replies: CommitReply[];
  try {
    const outcomes = trials.commitMany(batch.map((r) => [r.studyId, r.commit]));
    replies = outcomes.map((o, i) => (o.ok ? { id: batch[i]!.id, ok: true, result: o.result } : errorReply(batch[i]!.id, o.error)));
  } catch (err) {
    // The transaction as a whole failed (nothing of it is committed): every request gets the error.
    replies = batch.map((r) => errorReply(r.id, err));
  }
  port.postMessage(replies);
  if (closing) {
    db.close();
    port.close();
  }
});
