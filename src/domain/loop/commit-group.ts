/**
 * Group commit: requests for one study that queue behind its lock are handled together, in one
 * unit of work and so one commit (one fsync) for all of them. Each request still gets its own
 * outcome (a value or an error), and every one is answered only once the handler has returned,
 * that is after the commit that contains it succeeded.
 *
 * A group stays open until its turn comes: the first request of a group queues for the lock, and
 * the requests that arrive while the study is busy join it. When the lock is free, the group waits
 * one turn of the event loop (setImmediate) so that requests already received join before it closes.
 */
import type { KeyedMutex } from './study-lock.js';

export type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

interface Member<Req, Res> {
  req: Req;
  resolve: (value: Res) => void;
  reject: (error: unknown) => void;
}

export class CommitGroups<Req, Res> {
  /** The open (not yet started) group of each key. */
  private readonly open = new Map<string, Member<Req, Res>[]>();

  constructor(
    private readonly lock: KeyedMutex,
    /** Largest group: bounds the work (and the wait) of one commit. */
    private readonly maxGroup = 64,
  ) {}

  /**
   * Queue `req` for the group of `groupKey`, run under `lockKey`. `handle` gets the group's
   * requests in arrival order and returns one outcome per request, in the same order; if it
   * throws, every request of the group fails with that error.
   */
  submit(lockKey: string, groupKey: string, req: Req, handle: (reqs: Req[]) => Promise<Outcome<Res>[]>): Promise<Res> {
    return new Promise<Res>((resolve, reject) => {
      const member = { req, resolve, reject };
      const open = this.open.get(groupKey);
      if (open && open.length < this.maxGroup) {
        open.push(member);
        return;
      }
      const group = [member];
      this.open.set(groupKey, group);
      this.lock
        .run(lockKey, async () => {
          await new Promise<void>((r) => setImmediate(r));
          if (this.open.get(groupKey) === group) this.open.delete(groupKey);
          const outcomes = await handle(group.map((m) => m.req));
          group.forEach((m, i) => {
            const o = outcomes[i];
            if (!o) m.reject(new Error('commit group: no outcome for a request'));
            else if (o.ok) m.resolve(o.value);
            else m.reject(o.error);
          });
        })
        // The lock runs every holder (KeyedMutex never rejects before it), so the group has
        // already left `open` when its handler throws: only its members are answered here.
        .catch((err: unknown) => {
          for (const m of group) m.reject(err);
        });
    });
  }
}
