/**
 * Trials and counts as they read at a time: an ACTIVE trial whose lease has run out reads as
 * REQUESTED before the loop expires it (loop/lease.ts). The studies' read side (list, reports) and
 * the loop both use it.
 */
import type { TrialCounts, TrialRecord } from '../../storage/index.js';

/**
 * A trial as every read shows it at `now`: an ACTIVE trial whose lease ran out is REQUESTED, without
 * a lease, as the next loop request on the study will write it (expireLeases; the client id stays).
 * Expiry is written lazily, but no read shows a lease that no longer holds.
 */
export function asRead(t: TrialRecord, now: Date): TrialRecord {
  if (t.state !== 'ACTIVE' || t.leaseExpiresAt === null || t.leaseExpiresAt > now.toISOString()) return t;
  return { ...t, state: 'REQUESTED', leaseExpiresAt: null };
}

/** A study's trial counts as they read at `now`, given how many of its ACTIVE leases had run out (expiredLeaseCounts). */
export function countsAsRead(counts: TrialCounts, expired: number): TrialCounts {
  return expired === 0 ? counts : { ...counts, ACTIVE: counts.ACTIVE - expired, REQUESTED: counts.REQUESTED + expired };
}
