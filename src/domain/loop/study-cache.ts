/**
 * Per-study memory of what a loop request would otherwise read and parse again every time: the
 * latest engine state (by revision) and the COMPLETED trials in completion order (the history
 * every engine call gets). Only this process's own commits extend an entry; every load checks it
 * against storage, so a commit by another writer (another replica) is noticed and the entry
 * refreshed:
 *
 * - the engine state by its revision (each commit of a new state increases it);
 * - the completed trials by their count: COMPLETED is final, so a study's completed set only grows,
 *   and the same count means the same set;
 * - the search space (the prior's Cholesky factor, built from the study's parameters and prior,
 *   which never change) by the study's creation time, so a study that reappeared under the same id
 *   is not mistaken for the old one.
 *
 * - the configuration keys of those completed trials (no-repeat.ts: what a new point must not
 *   repeat), built from the cached list the first time a suggestion needs them and then extended
 *   with the list, so a suggestion costs the keys of what is new, not of the whole study. They
 *   belong to one list object: replaced (a reload after another writer's commit) or dropped with
 *   it, and built again from the new list when next needed. The set is extended in place: a
 *   study's requests run one at a time under its lock (study-lock.ts), and a request reads the
 *   set only before its commit, so no request sees it change.
 *
 * - optionally (LoopService's `warmSnapshots`), the whole snapshot this process's last commit left
 *   (what the next load would read if nobody else wrote), so that the next request of the study can
 *   skip the load: its commit checks the study's commit count, which every other write changes, so
 *   a stale entry costs one refused commit and a reload, never a wrong write.
 *
 * Bounded: the least recently used studies are forgotten first.
 */
import type { BaseState } from '../../engine/index.js';
import type { ParameterValue, TrialCounts, TrialRecord } from '../../storage/index.js';
import type { Study } from '../studies/codec.js';
import type { SearchSpace } from '../studies/transforms.js';

/**
 * What a request's commit leaves behind, when this process knows it exactly: the snapshot as the
 * next load would read it (see StudyCache.warm; study-snapshot.ts writes and reads it). `tenantId` is the owner, checked before use.
 */
export interface WarmSnapshot {
  tenantId: string;
  study: Study;
  revision: number;
  engine: BaseState;
  /** By ascending trial id, as a load returns them: REQUESTED or ACTIVE, or suggested in the current generation. */
  trials: readonly TrialRecord[];
  counts: TrialCounts;
  nextTrialId: number;
  commitSeq: number;
}

/** What history needs of a completed trial. */
export interface CompletedPoint {
  trialId: number;
  completedAt: string;
  point: number[] | null;
  value: number;
  /** The standard error reported with the value, or null (the ProbNES methods use it: ALGORITHM.md §28). */
  stderr: number | null;
  /** As handed out, in user units (what no-repeat.ts compares). */
  parameters: Readonly<Record<string, ParameterValue>>;
}

/** Completion order, as storage sorts it: completed_at, then trial id. */
export function completionOrder(a: CompletedPoint, b: CompletedPoint): number {
  return a.completedAt < b.completedAt ? -1 : a.completedAt > b.completedAt ? 1 : a.trialId - b.trialId;
}

/** Two lists in completion order merged into a new one (linear: the second is usually tiny). */
export function mergeCompleted(a: readonly CompletedPoint[], b: readonly CompletedPoint[]): CompletedPoint[] {
  if (b.length === 0) return a.slice();
  const out: CompletedPoint[] = new Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) out[k++] = completionOrder(a[i]!, b[j]!) <= 0 ? a[i++]! : b[j++]!;
  while (i < a.length) out[k++] = a[i++]!;
  while (j < b.length) out[k++] = b[j++]!;
  return out;
}

/** Configuration keys of an entry's completed list, in one search space (see the header). */
interface CompletedKeys {
  space: SearchSpace;
  of: (p: CompletedPoint) => string;
  set: Set<string>;
}

interface Entry {
  engine: { revision: number; state: BaseState } | null;
  completed: readonly CompletedPoint[] | null;
  /** Exactly the keys of `completed` (null: not built yet). */
  keys: CompletedKeys | null;
  space: { createdAt: string; value: SearchSpace } | null;
  warm: WarmSnapshot | null;
}

export class StudyCache {
  private readonly entries = new Map<string, Entry>();
  /** Completed histories read from storage because no entry had them (counted for /metrics). */
  historyReads = 0;
  /** Key sets built from a whole completed list (once per list read; extensions are not counted). */
  keyBuilds = 0;

  constructor(private readonly maxStudies = 512) {}

  private entry(studyId: string): Entry {
    let e = this.entries.get(studyId);
    if (e) {
      // Most recently used last, so eviction takes the first key.
      this.entries.delete(studyId);
    } else {
      e = { engine: null, completed: null, keys: null, space: null, warm: null };
      if (this.entries.size >= this.maxStudies) this.entries.delete(this.entries.keys().next().value!);
    }
    this.entries.set(studyId, e);
    return e;
  }

  engineRevision(studyId: string): number | null {
    return this.entries.get(studyId)?.engine?.revision ?? null;
  }

  /** The cached state if it is the one of `revision`. */
  engine(studyId: string, revision: number): BaseState | null {
    const e = this.entries.get(studyId)?.engine;
    return e && e.revision === revision ? e.state : null;
  }

  setEngine(studyId: string, revision: number, state: BaseState): void {
    this.entry(studyId).engine = { revision, state };
  }

  /** The completed trials if the cache has exactly `count` of them (see the header). */
  completed(studyId: string, count: number): readonly CompletedPoint[] | null {
    const c = this.entries.get(studyId)?.completed;
    return c && c.length === count ? c : null;
  }

  setCompleted(studyId: string, completed: readonly CompletedPoint[]): void {
    const e = this.entry(studyId);
    e.completed = completed;
    e.keys = null;
  }

  /** After a commit made from `loadedCount` completed trials: append the ones it completed (if the entry is that state), to the keys too. */
  extendCompleted(studyId: string, loadedCount: number, fresh: readonly CompletedPoint[]): void {
    if (!this.entries.get(studyId)?.completed) return;
    const e = this.entry(studyId);
    if (e.completed!.length !== loadedCount) {
      e.completed = null;
      e.keys = null;
    } else if (fresh.length > 0) {
      e.completed = mergeCompleted(e.completed!, fresh);
      if (e.keys) for (const p of fresh) e.keys.set.add(e.keys.of(p));
    }
  }

  /**
   * The keys `of` the points of `completed` in `space`, if `completed` is the entry's list: the
   * cached set (built now if it was not). Null for any other list (one not cached: the caller
   * builds its own). Read-only for the caller (see the header).
   */
  completedKeys(studyId: string, completed: readonly CompletedPoint[], space: SearchSpace, of: (p: CompletedPoint) => string): ReadonlySet<string> | null {
    const e = this.entries.get(studyId);
    if (!e || e.completed !== completed) return null;
    if (!e.keys || e.keys.space !== space) {
      this.keyBuilds++;
      e.keys = { space, of, set: new Set(completed.map(of)) };
    }
    return e.keys.set;
  }

  /** The study's search space, built by `build` the first time (per study and creation time). */
  space(studyId: string, createdAt: string, build: () => SearchSpace): SearchSpace {
    const e = this.entry(studyId);
    if (e.space?.createdAt !== createdAt) e.space = { createdAt, value: build() };
    return e.space.value;
  }

  /** What this process's last commit on the study left, if it belongs to `tenantId`. */
  warm(studyId: string, tenantId: string): WarmSnapshot | null {
    const w = this.entries.get(studyId)?.warm;
    return w && w.tenantId === tenantId ? w : null;
  }

  setWarm(studyId: string, warm: WarmSnapshot | null): void {
    if (warm === null && !this.entries.has(studyId)) return;
    this.entry(studyId).warm = warm;
  }

  forget(studyId: string): void {
    this.entries.delete(studyId);
  }
}
