/**
 * A per-key async mutex: requests on one study run one at a time (no trial handed out twice, no
 * lost update), requests on different studies run in parallel. In process only: with several
 * replicas on one database the storage's revision and trial-state guards catch the races instead,
 * and the loser reloads and recomputes.
 */
export class KeyedMutex {
  /** The tail of each key's queue; removed when the last holder releases, so idle keys cost nothing. */
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => mine);
    this.tails.set(key, tail);
    await previous;
    try {
      return await fn();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  /** Keys with a holder or waiters (for tests and metrics). */
  get size(): number {
    return this.tails.size;
  }
}
