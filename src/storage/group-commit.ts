/**
 * Group commit, for both databases. A commit that finds none in flight goes out at once (with
 * those submitted in the same task); the commits that arrive while a group is being written queue,
 * and go out together when it returns,
 * as one transaction (one fsync on SQLite, one WAL flush on PostgreSQL) in which each keeps its own
 * checks and outcome. A database supplies only "apply this group in one transaction"
 * (SQLite: on its writer thread, commit-worker.ts; PostgreSQL: postgres/commit.ts). Every commit is
 * answered only after the transaction containing it has committed.
 *
 * At most one commit per study goes in a group (the loop's per-study lock makes a second one
 * rare): a later one waits for the next group, so that it is checked against the first one's
 * writes; and PostgreSQL locks a group's study rows once each, in one order.
 */
import type { CommitResult, GenerationCommit } from './storage.js';

export interface QueuedCommit {
  studyId: string;
  commit: GenerationCommit;
}

/**
 * One commit's outcome in its group: its result, or the error that failed it (the group's, if the
 * transaction as a whole failed), or `retry`: it could not be checked in this group (nothing of it
 * was written) and goes in the next one.
 */
export type Settled = { ok: true; result: CommitResult } | { ok: false; error: unknown } | { retry: true };

/** Applies a group in one transaction; answers one Settled per commit, in the group's order. */
export type ApplyGroup = (group: readonly QueuedCommit[]) => Promise<Settled[]> | Settled[];

interface Pending extends QueuedCommit {
  resolve: (r: CommitResult) => void;
  reject: (err: unknown) => void;
}

export class GroupCommit {
  private readonly queue: Pending[] = [];
  private inFlight = false;
  private scheduled = false;
  private readonly drained: (() => void)[] = [];

  /** `maxGroup` bounds a transaction's time and its locks. */
  constructor(
    private readonly apply: ApplyGroup,
    private readonly maxGroup = 64,
  ) {}

  submit(studyId: string, commit: GenerationCommit): Promise<CommitResult> {
    return new Promise<CommitResult>((resolve, reject) => {
      this.queue.push({ studyId, commit, resolve, reject });
      // After the current task: commits submitted together (a writer thread's drained messages,
      // a request's several commits) form one group.
      if (!this.scheduled) {
        this.scheduled = true;
        queueMicrotask(() => {
          this.scheduled = false;
          this.flush();
        });
      }
    });
  }

  /** Resolves once every commit submitted so far is answered (for a close that lets them finish). */
  idle(): Promise<void> {
    if (!this.inFlight && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.drained.push(resolve));
  }

  private flush(): void {
    if (this.inFlight) return;
    if (this.queue.length === 0) {
      for (const resolve of this.drained.splice(0)) resolve();
      return;
    }
    const group: Pending[] = [];
    const studies = new Set<string>();
    for (let i = 0; i < this.queue.length && group.length < this.maxGroup; ) {
      const p = this.queue[i]!;
      if (studies.has(p.studyId)) {
        i++;
        continue;
      }
      studies.add(p.studyId);
      group.push(p);
      this.queue.splice(i, 1);
    }
    this.inFlight = true;
    void this.run(group).finally(() => {
      this.inFlight = false;
      this.flush();
    });
  }

  private async run(group: Pending[]): Promise<void> {
    let settled: Settled[];
    try {
      settled = await this.apply(group.map((p) => ({ studyId: p.studyId, commit: p.commit })));
    } catch (err) {
      for (const p of group) p.reject(err);
      return;
    }
    const again: Pending[] = [];
    group.forEach((p, k) => {
      const s = settled[k];
      if (!s) p.reject(new Error('a group commit returned no outcome for a commit'));
      else if ('retry' in s) again.push(p);
      else if (s.ok) p.resolve(s.result);
      else p.reject(s.error);
    });
    this.queue.unshift(...again);
  }
}
