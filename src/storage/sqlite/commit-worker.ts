/**
 * The writer thread's side of commit-thread.ts: its own connection to the database file (same
 * pragmas, synchronous=FULL) and "apply this group in one transaction" for group-commit.ts. A
 * group's commits (any studies) are written in one transaction, so one fsync for all of them; each
 * keeps its own outcome through a savepoint. The reply goes out only after the transaction's COMMIT
 * returned, and carries each commit's result: the outcome, the revision and the new trials' ids.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from './connection.js';
import { TrialsRepo } from './trials-repo.js';
import type { GroupReply, GroupRequest } from './commit-thread.js';

const port = parentPort!;
const { file, busyTimeoutMs } = workerData as { file: string; busyTimeoutMs?: number };
const db = openDatabase(file, busyTimeoutMs === undefined ? {} : { busyTimeoutMs });
const trials = new TrialsRepo(db);

function errorOutcome(err: unknown): GroupReply['outcomes'][number] {
  const e = err as { message?: string; code?: unknown };
  return { ok: false, message: e?.message ?? String(err), code: typeof e?.code === 'string' ? e.code : null };
}

// Open and prepared: the first commit will not wait for the thread's start.
port.postMessage({ ready: true });

port.on('message', (msg: GroupRequest | { close: true }) => {
  if ('close' in msg) {
    db.close();
    port.close();
    return;
  }
  let outcomes: GroupReply['outcomes'];
  try {
    outcomes = trials.commitMany(msg.group).map((o) => (o.ok ? o : errorOutcome(o.error)));
  } catch (err) {
    // The transaction as a whole failed (nothing of it is committed): every commit gets the error.
    outcomes = msg.group.map(() => errorOutcome(err));
  }
  port.postMessage({ id: msg.id, outcomes } satisfies GroupReply);
});
