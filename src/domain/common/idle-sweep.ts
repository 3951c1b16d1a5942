/**
 * The idle sweep of the main thread's caches of study data (CACHE_IDLE_MS;
 * docs/capacity.md, "Memory: every cache bounded"): the study cache, the model views, the reports'
 * fronts and predictions, the fair scheduler's measured times and the metrics' method labels each
 * forget what no request has used for `idleMs`. A bound by count and bytes keeps a busy server's
 * memory in check, but once the traffic stops every cache stays full for as long as the process
 * runs, months for a server; forgetting by time gives that memory back.
 *
 * A quiet server receives no requests, so expiry cannot wait for the next access: one timer, every
 * min(idleMs / 4, 60 s), asks each cache to forget. An entry is therefore dropped between `idleMs`
 * and `idleMs` plus one period after its last use. The timer is unref'd (it never keeps the process
 * alive) and stopped with the app (app.ts: Fastify's onClose).
 */

/** A cache that can forget what it has not used for a while; returns how many entries it dropped. */
export interface IdleForgetting {
  forgetIdle(idleMs: number): number;
}

/**
 * The forgetIdle of one map: drops every entry last used before `before` (ms, the cache's clock)
 * by `drop` (a plain delete unless the cache keeps accounts of its entries), in one scan; returns
 * how many it dropped.
 */
export function dropUnusedSince<K, V extends { usedAt: number }>(entries: Map<K, V>, before: number, drop: (key: K) => void = (key) => void entries.delete(key)): number {
  let dropped = 0;
  for (const [key, e] of entries) {
    if (e.usedAt < before) {
      drop(key);
      dropped++;
    }
  }
  return dropped;
}

/** Longest time between two sweeps. */
export const IDLE_SWEEP_MAX_PERIOD_MS = 60_000;

/** How often the caches are swept for an idle limit of `idleMs`. */
export const idleSweepPeriod = (idleMs: number): number => Math.max(1, Math.min(Math.floor(idleMs / 4), IDLE_SWEEP_MAX_PERIOD_MS));

export interface IdleSweep {
  /** The timer (unref'd). */
  readonly timer: NodeJS.Timeout;
  readonly periodMs: number;
  /** Entries dropped by the sweeps so far. */
  readonly dropped: number;
  stop(): void;
}

/** Starts sweeping `caches` for entries idle `idleMs`; null when idleMs is 0 (no expiry). */
export function startIdleSweep(idleMs: number, caches: readonly IdleForgetting[]): IdleSweep | null {
  if (idleMs <= 0) return null;
  const periodMs = idleSweepPeriod(idleMs);
  let dropped = 0;
  const timer = setInterval(() => {
    for (const c of caches) dropped += c.forgetIdle(idleMs);
  }, periodMs);
  timer.unref();
  return {
    timer,
    periodMs,
    get dropped() {
      return dropped;
    },
    stop: () => clearInterval(timer),
  };
}
