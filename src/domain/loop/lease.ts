/**
 * Leases: a handed-out trial belongs to one client until `lease_expires_at`. Expiry is lazy: the
 * next request that touches the study puts every expired trial back to REQUESTED with the same
 * point, so another client (or the same one) gets it again. A result that arrives for an expired
 * trial that nobody has finished is still accepted (see observations.ts).
 */
import type { TrialRecord } from '../../storage/index.js';
import type { StudySnapshot } from './study-snapshot.js';

// How trials and counts read at a time (an ACTIVE trial whose lease ran out reads as REQUESTED): the
// studies' read side needs it too, so it lives below the loop.
export { asRead, countsAsRead } from '../studies/lease-view.js';

/** The client of requests that do not name one. */
export const DEFAULT_CLIENT = 'default';

export function leaseExpiry(now: Date, leaseSeconds: number): string {
  return new Date(now.getTime() + leaseSeconds * 1000).toISOString();
}

/**
 * Expired leases back to REQUESTED (in memory; written with the request's commit). The client id
 * stays as the last holder's until someone else takes the trial, so a slow client's heartbeat can
 * still reclaim it.
 */
export function expireLeases(snap: StudySnapshot, now: Date): TrialRecord[] {
  const nowIso = now.toISOString();
  const expired = snap.inState('ACTIVE').filter((t) => t.leaseExpiresAt !== null && t.leaseExpiresAt <= nowIso);
  for (const t of expired) snap.change(t.trialId, { state: 'REQUESTED', leaseExpiresAt: null });
  return expired;
}

/** Lease (or re-lease, extending it) a trial to a client. */
export function leaseTo(snap: StudySnapshot, trial: TrialRecord, clientId: string, now: Date): TrialRecord {
  return snap.change(trial.trialId, { state: 'ACTIVE', clientId, leaseExpiresAt: leaseExpiry(now, snap.study.leaseSeconds) });
}

/** The client's ACTIVE trials, by trial id: what a retried GET suggestions hands back first. */
export function heldBy(snap: StudySnapshot, clientId: string): TrialRecord[] {
  return snap.inState('ACTIVE').filter((t) => t.clientId === clientId);
}

/** At most this many leases are listed in a suggestions answer's `budget` (its counts cover them all). */
export const LEASES_LISTED = 100;

export interface Lease {
  trialId: number;
  clientId: string;
  leaseExpiresAt: string;
}

/**
 * What holds a max_trials budget: REQUESTED, ACTIVE and COMPLETED trials (StudySnapshot.budgetUsed).
 * A lease holds its slot until the trial is reported, failed or abandoned, or until the lease
 * expires: the trial then goes back to REQUESTED with the same point and is handed to the next
 * asker. `leases` lists the ACTIVE trials (the asker's own included), the soonest to expire first,
 * at most LEASES_LISTED of them; `leased` counts them all.
 */
export interface BudgetHeld {
  maxTrials: number;
  completed: number;
  leased: number;
  requested: number;
  leases: Lease[];
}

export function budgetHeld(snap: StudySnapshot, maxTrials: number): BudgetHeld {
  const active = snap.inState('ACTIVE').filter((t) => t.clientId !== null && t.leaseExpiresAt !== null);
  active.sort((a, b) => (a.leaseExpiresAt! < b.leaseExpiresAt! ? -1 : a.leaseExpiresAt! > b.leaseExpiresAt! ? 1 : a.trialId - b.trialId));
  return {
    maxTrials,
    completed: snap.count('COMPLETED'),
    leased: snap.count('ACTIVE'),
    requested: snap.count('REQUESTED'),
    leases: active.slice(0, LEASES_LISTED).map((t) => ({ trialId: t.trialId, clientId: t.clientId!, leaseExpiresAt: t.leaseExpiresAt! })),
  };
}
