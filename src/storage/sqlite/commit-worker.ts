/**
 * The writer thread's side of commit-thread.ts: its own connection to the database file (same
 * pragmas, synchronous=FULL), the group commit of group-commit.ts, and "apply this group in one
 * transaction" for it. Commits that queued while the previous group was being written are drained
 * from the port and written together (one fsync for all of them, whichever studies they belong
 * to); each keeps its own outcome through a savepoint. Replies go out only after the transaction's
 * COMMIT returned, and carry each commit's result: the outcome, the revision and the new trials' ids.
 */
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { openDatabase } from './connection.js';
import { TrialsRepo } from './trials-repo.js';
import { GroupCommit } from '../group-commit.js';
import type { CommitReply, CommitRequest } from './commit-thread.js';

const port = parentPort!;
const { file, busyTimeoutMs } = workerData as { file: string; busyTimeoutMs?: number };
const db = openDatabase(file, busyTimeoutMs === undefined ? {} : { busyTimeoutMs });
const trials = new TrialsRepo(db);
const groups = new GroupCommit((group) => trials.commitMany(group));

function errorReply(id: number, err: unknown): CommitReply {
  const e = err as { message?: string; code?: unknown };
  return { id, ok: false, message: e?.message ?? String(err), code: typeof e?.code === 'string' ? e.code : null };
}

/** A group's replies, sent as one message once all of them are in. */
let replies: CommitReply[] = [];
function reply(r: CommitReply): void {
  if (replies.length === 0) queueMicrotask(sendReplies);
  replies.push(r);
}
function sendReplies(): void {
  if (replies.length > 0) port.postMessage(replies);
  replies = [];
}

// Open and prepared: the first commit will not wait for the thread's start.
port.postMessage({ ready: true });

let closing = false;
function take(msg: CommitRequest | { close: true }): void {
  if ('close' in msg) {
    closing = true;
    return;
  }
  groups.submit(msg.studyId, msg.commit).then(
    (result) => reply({ id: msg.id, ok: true, result }),
    (err: unknown) => reply(errorReply(msg.id, err)),
  );
}

port.on('message', (first: CommitRequest | { close: true }) => {
  // Everything that arrived meanwhile joins this group (group-commit.ts flushes after this task).
  take(first);
  for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port)) take(m.message as CommitRequest | { close: true });
  if (closing) {
    // Lets the queued commits finish and answers them before the connection closes.
    void groups.idle().then(() => {
      sendReplies();
      db.close();
      port.close();
    });
  }
});
