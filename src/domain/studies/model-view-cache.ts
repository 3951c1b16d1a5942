/**
 * The model views' cache (model-views.ts): their answers, and the hyperparameters of GPs fitted for
 * them, kept per tenant so that one tenant cannot flush another's entries.
 *
 * - **Keys name what an answer depends on**: the caller builds them from the study, the engine
 *   state's generation and revision, the view and its query parameters, and a digest of the
 *   completed trials the view read (ids and values). A new generation, a rewritten state or a new
 *   result makes a new key; an old key is never served stale, it ages out.
 * - **Bounds**: per tenant at most `perTenantEntries` entries and `perTenantBytes` bytes (its least
 *   recently used entry goes first); for the whole server at most `entries` entries and `bytes`
 *   bytes. When the whole is over a bound, the tenant holding the most (entries, or bytes) gives up
 *   its least recently used entry (between tenants holding as much, the one whose entry was used
 *   longest ago): a tenant holding less than another never loses an entry to that one's traffic.
 *   A value larger than a bound is not kept.
 * - **Idle expiry**: forgetIdle drops every entry not read or set for a while (CACHE_IDLE_MS;
 *   idle-sweep.ts calls it periodically), so that a server whose traffic stops gives the memory back.
 *   Dropping one is an eviction: a request holding its value keeps it, the next one computes it again.
 *   Computations under way are not entries, and are not touched.
 * - **Single flight**: a computation under way is shared: an identical request that arrives
 *   meanwhile awaits the first one's promise. A failure is not cached (the next request retries).
 *
 * Sizes are estimates of the value's heap footprint (approxBytes: 8 bytes a number, 2 a character,
 * plus per-array and per-key overhead), not measurements. Bounds: docs/capacity.md.
 */
import { dropUnusedSince } from '../common/idle-sweep.js';

export interface ModelViewCacheBounds {
  perTenantEntries: number;
  perTenantBytes: number;
  entries: number;
  bytes: number;
}

const MiB = 1024 * 1024;

/**
 * By approxBytes, a 60×60 grid with 1,300 drawn points and 100 parameters is about 0.37 MB (a
 * tenant's 16 MiB hold about 44 of them); an importance view of 100 parameters about 40 kB; a fit's
 * hyperparameters about 1 kB.
 */
export const MODEL_VIEW_CACHE_BOUNDS: ModelViewCacheBounds = {
  perTenantEntries: 64,
  perTenantBytes: 16 * MiB,
  entries: 1024,
  bytes: 64 * MiB,
};

interface Entry {
  value: unknown;
  bytes: number;
  /** When it was last set or read (a counter): breaks ties between tenants holding as much. */
  used: number;
  /** When it was last set or read (the cache's clock, ms): forgetIdle's measure. */
  usedAt: number;
}

interface TenantPart {
  /** In recency order: the first is the least recently used. */
  entries: Map<string, Entry>;
  bytes: number;
}

export class ModelViewCache {
  private readonly tenants = new Map<string, TenantPart>();
  private readonly inflight = new Map<string, Promise<unknown>>();
  private count = 0;
  private total = 0;
  private clock = 0;

  constructor(
    readonly bounds: ModelViewCacheBounds = MODEL_VIEW_CACHE_BOUNDS,
    private readonly sizeOf: (value: unknown) => number = approxBytes,
    /** The clock of forgetIdle, in ms (tests inject one). */
    private readonly now: () => number = Date.now,
  ) {}

  /** Entries and estimated bytes held, in all and per tenant (tests, metrics). */
  stats(): { entries: number; bytes: number; inflight: number; tenants: Record<string, { entries: number; bytes: number }> } {
    const tenants: Record<string, { entries: number; bytes: number }> = Object.create(null);
    for (const [t, p] of this.tenants) tenants[t] = { entries: p.entries.size, bytes: p.bytes };
    return { entries: this.count, bytes: this.total, inflight: this.inflight.size, tenants };
  }

  get<T>(tenantId: string, key: string): T | undefined {
    const part = this.tenants.get(tenantId);
    const e = part?.entries.get(key);
    if (!part || !e) return undefined;
    part.entries.delete(key);
    part.entries.set(key, e);
    e.used = ++this.clock;
    e.usedAt = this.now();
    return e.value as T;
  }

  /** Drops every entry not read or set for `idleMs` (see the header). Returns how many were dropped. */
  forgetIdle(idleMs: number): number {
    const before = this.now() - idleMs;
    let dropped = 0;
    // Least recently used first, but a whole scan all the same (at most the entry bound): a clock set back leaves no entry behind.
    for (const [tenantId, part] of this.tenants) dropped += dropUnusedSince(part.entries, before, (key) => this.remove(tenantId, key));
    return dropped;
  }

  set(tenantId: string, key: string, value: unknown): void {
    const bytes = this.sizeOf(value) + 2 * key.length + 64;
    this.remove(tenantId, key);
    if (bytes > this.bounds.perTenantBytes || bytes > this.bounds.bytes || this.bounds.perTenantEntries < 1 || this.bounds.entries < 1) return;
    let part = this.tenants.get(tenantId);
    if (!part) this.tenants.set(tenantId, (part = { entries: new Map(), bytes: 0 }));
    part.entries.set(key, { value, bytes, used: ++this.clock, usedAt: this.now() });
    part.bytes += bytes;
    this.count++;
    this.total += bytes;
    while (part.entries.size > this.bounds.perTenantEntries || part.bytes > this.bounds.perTenantBytes) this.evictOldest(tenantId);
    while (this.count > this.bounds.entries) this.evictOldest(this.largest((p) => p.entries.size));
    while (this.total > this.bounds.bytes) this.evictOldest(this.largest((p) => p.bytes));
  }

  /**
   * The cached value under (tenant, key), else the computation under way for it, else `compute()`
   * (shared with identical requests until it settles, and kept if it succeeds).
   */
  getOrCompute<T>(tenantId: string, key: string, compute: () => Promise<T>): Promise<T> {
    const hit = this.get<T>(tenantId, key);
    if (hit !== undefined) return Promise.resolve(hit);
    const flightKey = `${tenantId}\u0000${key}`;
    const pending = this.inflight.get(flightKey);
    if (pending) return pending as Promise<T>;
    const run = (async () => {
      try {
        const value = await compute();
        this.set(tenantId, key, value);
        return value;
      } finally {
        this.inflight.delete(flightKey);
      }
    })();
    this.inflight.set(flightKey, run);
    return run;
  }

  private remove(tenantId: string, key: string): void {
    const part = this.tenants.get(tenantId);
    const e = part?.entries.get(key);
    if (!part || !e) return;
    part.entries.delete(key);
    part.bytes -= e.bytes;
    this.count--;
    this.total -= e.bytes;
    if (part.entries.size === 0) this.tenants.delete(tenantId);
  }

  private evictOldest(tenantId: string): void {
    const part = this.tenants.get(tenantId);
    const oldest = part?.entries.keys().next();
    if (!oldest || oldest.done) return;
    this.remove(tenantId, oldest.value);
  }

  /**
   * The tenant holding the most by `measure`; on a tie, the one whose least recently used entry is
   * the oldest (so that tenants holding one entry each share the cache by recency).
   */
  private largest(measure: (p: TenantPart) => number): string {
    let best = '', most = -1, oldest = Infinity;
    for (const [t, p] of this.tenants) {
      const m = measure(p);
      const first = p.entries.values().next().value?.used ?? Infinity;
      if (m > most || (m === most && first < oldest)) [best, most, oldest] = [t, m, first];
    }
    return best;
  }
}

/**
 * An estimate of a JSON-like value's heap footprint: 8 bytes a number (V8 keeps arrays of doubles
 * unboxed), 2 a string's character, 16 per array or object and 8 per element, 16 per property plus
 * its name.
 */
export function approxBytes(value: unknown): number {
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined) return 8;
  if (typeof value === 'string') return 16 + 2 * value.length;
  if (value instanceof Set) return 16 + 16 * value.size;
  if (Array.isArray(value)) {
    let s = 16 + 8 * value.length;
    for (const v of value) if (typeof v === 'object' || typeof v === 'string') s += approxBytes(v);
    return s;
  }
  if (typeof value === 'object') {
    let s = 16;
    for (const k of Object.keys(value)) s += 16 + 2 * k.length + approxBytes((value as Record<string, unknown>)[k]);
    return s;
  }
  return 8;
}
