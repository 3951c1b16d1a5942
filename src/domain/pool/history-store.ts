/**
 * A study's history kept where the engine runs, so that an engine call carries what is new, not
 * the whole history: sending 100,000 observations to a worker thread is a structured clone of
 * 100,000 objects (about 80 ms), on every ask and tell.
 *
 * The loop (src/domain/loop/engine-history.ts) names each history it sends by a `log` id: one list
 * of observations in completion order that only grows by appending (a new id whenever that is not
 * so: another writer's commit reloaded it, a result came in out of completion order). A call sends
 * `{log, from, tail, length}`: the history is the log's first `from` observations, which the thread
 * is expected to hold already, followed by `tail`, `length` in all. Every thread (each worker; the
 * main thread for the inline runner) keeps its own store:
 *
 * - a call also says how many of its observations are `stored` (committed: the log's own, which
 *   never change); the rest are the request's own results, which its commit may still refuse. The
 *   thread trusts only the stored part afterwards: a later call may rely on at most that many;
 * - the thread's copy of the log is cut to `from` and `tail` appended: whatever it held beyond
 *   `from` (the results of a request whose commit then failed, say) is replaced, never used;
 * - a thread without the log, or trusting fewer than `from` of it (a new thread, an evicted log),
 *   answers a miss, and the loop sends the call again with the whole history (`from` 0), which
 *   always resolves.
 *
 * Bounded in bytes (estimated: 8 a coordinate, 96 an observation's objects), least recently used
 * logs forgotten first; a log larger than the bound is used for its call and not kept. And in time: a
 * log no call has used for HISTORY_IDLE_MS is forgotten at the next call. The loop names a new log
 * whenever it reloads a history (a study deleted, dropped from the study cache, reread after another
 * writer's commit), and the old one is then never asked for again; without this, those dead logs
 * stayed until the byte bound pushed them out, and a server that creates and deletes studies held
 * hundreds of MiB of them in its threads, growing for hours. A live study whose loop paused longer
 * pays one miss: its next call is sent whole (about 1 ms per 1,000 observations).
 */
import { threadId } from 'node:worker_threads';
import type { Observation, PackedHistory } from '../../engine/index.js';

/** A history sent by reference to what the thread holds (see the header). */
export interface HistoryDelta {
  log: string;
  /** Observations of the log the thread must hold already; `tail` follows them. */
  from: number;
  tail: Observation[];
  /** from + tail.length: checked, so that a mismatch can never reach the engine. */
  length: number;
  /** The first `stored` observations are the log's (committed); a later call may rely on them. */
  stored: number;
}

export const isHistoryDelta = (h: Observation[] | HistoryDelta): h is HistoryDelta => !Array.isArray(h);

/** Bytes one observation of dimension d is estimated to take (its object, its x array, the numbers). */
export const observationBytes = (d: number) => 96 + 8 * d;

/** Default bound of one thread's store. */
export const HISTORY_STORE_BYTES = 256 * 1024 * 1024;

/** A log unused this long (ms) is forgotten (see the header). */
export const HISTORY_IDLE_MS = 5 * 60_000;

interface Kept {
  obs: Observation[];
  /** obs packed row by row, kept beside it (null once a row's dimension differs from the first's). */
  packer: Packer | null;
  /** The first `trusted` of obs are the log's (the last call's `stored`). */
  trusted: number;
  bytes: number;
  /** When a call last used it (the store's clock). */
  usedAt: number;
}

/**
 * A log's points and values in two growing flat arrays (PackedHistory): the ProbNES update scans the
 * whole history on every tell, and reading 100,000 points from one Float64Array instead of 100,000
 * objects and their arrays makes that scan several times cheaper. Grown by doubling; cut like obs.
 */
export class Packer {
  private x = new Float64Array(0);
  private y = new Float64Array(0);
  private n = 0;
  private d = -1;

  /** Keeps the first `from` rows. */
  cut(from: number): void {
    this.n = Math.min(this.n, from);
  }

  /** Appends one observation; false (and the packer is no longer usable) when its dimension differs from the first's. */
  push(o: Observation): boolean {
    const x = o.x;
    if (this.d < 0) this.d = x.length;
    if (x.length !== this.d) return false;
    if (this.n === this.y.length) this.grow(Math.max(16, 2 * this.n));
    const base = this.n * this.d;
    for (let i = 0; i < this.d; i++) this.x[base + i] = x[i]!;
    this.y[this.n] = o.y;
    this.n++;
    return true;
  }

  /** Views of the first n rows: valid until the next cut or push. */
  view(): PackedHistory {
    return { x: this.x.subarray(0, this.n * Math.max(this.d, 0)), y: this.y.subarray(0, this.n) };
  }

  get bytes(): number {
    return this.x.byteLength + this.y.byteLength;
  }

  private grow(rows: number): void {
    const x = new Float64Array(rows * Math.max(this.d, 0));
    x.set(this.x.subarray(0, this.n * Math.max(this.d, 0)));
    const y = new Float64Array(rows);
    y.set(this.y.subarray(0, this.n));
    this.x = x;
    this.y = y;
  }
}

export class HistoryStore {
  private readonly logs = new Map<string, Kept>();
  private bytes = 0;
  /** Calls that found the prefix they needed, and calls that did not (the loop then sent everything). */
  hits = 0;
  misses = 0;

  constructor(
    private readonly maxBytes = HISTORY_STORE_BYTES,
    private readonly idleMs = HISTORY_IDLE_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The whole history of `delta`, or null when this thread does not hold its first `from`
   * observations. The array returned is the store's own: read-only for the caller, and valid until
   * the next call on this store.
   */
  resolve(delta: HistoryDelta): Observation[] | null {
    return this.resolvePacked(delta)?.history ?? null;
  }

  /** resolve(), with the history packed (PackedHistory) when every observation of the log has one dimension. */
  resolvePacked(delta: HistoryDelta): { history: Observation[]; packed: PackedHistory | null } | null {
    if (delta.from + delta.tail.length !== delta.length || delta.stored > delta.length) throw new Error(`history ${delta.log}: ${delta.from} + ${delta.tail.length} observations is not ${delta.length} (${delta.stored} stored)`);
    this.forgetIdle();
    const kept = this.logs.get(delta.log);
    if (delta.from > 0 && (!kept || kept.trusted < delta.from)) {
      this.misses++;
      return null;
    }
    this.hits++;
    const obs = delta.from === 0 ? [] : kept!.obs;
    let packer = delta.from === 0 ? new Packer() : kept!.packer;
    obs.length = delta.from;
    packer?.cut(delta.from);
    for (const o of delta.tail) {
      obs.push(o);
      if (packer && !packer.push(o)) packer = null;
    }
    this.keep(delta.log, obs, packer, delta.stored);
    return { history: obs, packed: packer ? packer.view() : null };
  }

  private keep(log: string, obs: Observation[], packer: Packer | null, trusted: number): void {
    const old = this.logs.get(log);
    if (old) {
      this.bytes -= old.bytes;
      this.logs.delete(log);
    }
    const bytes = obs.length * observationBytes(obs[0]?.x.length ?? 0) + (packer?.bytes ?? 0);
    if (bytes > this.maxBytes) return;
    // Most recently used last: eviction takes the first.
    this.logs.set(log, { obs, packer, trusted, bytes, usedAt: this.now() });
    this.bytes += bytes;
    for (const [id, k] of this.logs) {
      if (this.bytes <= this.maxBytes) break;
      this.logs.delete(id);
      this.bytes -= k.bytes;
    }
  }

  /** Forgets the logs no call has used for idleMs: the least recently used come first, so the scan stops at the first recent one. */
  private forgetIdle(): void {
    const before = this.now() - this.idleMs;
    for (const [id, k] of this.logs) {
      if (k.usedAt >= before) break;
      this.logs.delete(id);
      this.bytes -= k.bytes;
    }
  }

  /** Observations of `log` this thread trusts (0 when none): for tests. */
  trusted(log: string): number {
    return this.logs.get(log)?.trusted ?? 0;
  }

  get size(): { logs: number; bytes: number } {
    return { logs: this.logs.size, bytes: this.bytes };
  }
}

/** This thread's store (a worker's, or the main thread's for the inline runner). */
export const threadHistory = new HistoryStore();

/** Which thread resolved a history: the loop remembers what each thread holds by it. */
export const currentThread = (): number => threadId;
