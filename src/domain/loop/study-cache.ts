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
 * Kept with the completed list, built from it the first time a request needs them, then extended
 * with it, so that a request costs what is new, not the whole study:
 *
 * - the configuration keys of those trials (no-repeat.ts: what a new point must not repeat);
 * - the history as the engine reads it (engine-history.ts's HistoryLog: what engine threads are
 *   sent a tail of).
 *
 * A commit's results are appended to the list in place (and to its keys and history) when they
 * come after every stored one in completion order, the usual case; otherwise (a result stamped
 * earlier than stored ones: another replica's clock) the list is merged anew and the history log
 * replaced by a new one. All of it belongs to one list: replaced (a reload after another writer's
 * commit) or dropped with it. Extended in place safely because a study's requests run one at a
 * time under its lock (study-lock.ts) and a request reads them only before its commit, so no
 * request sees them change.
 *
 * - optionally (LoopService's `warmSnapshots`), the whole snapshot this process's last commit left
 *   (what the next load would read if nobody else wrote), so that the next request of the study can
 *   skip the load: its commit checks the study's commit count, which every other write changes, so
 *   a stale entry costs one refused commit and a reload, never a wrong write.
 *
 * Bounded by studies (512) and by bytes (256 MiB, estimated: STUDY_CACHE_BOUNDS): the least
 * recently used studies are forgotten first. A study whose list alone is over the byte bound keeps
 * its engine state and space but not its list (its requests read the history again each time).
 *
 * And in time: forgetIdle drops every study no request has used (read or set anything of) for a
 * while (CACHE_IDLE_MS; idle-sweep.ts calls it periodically), so that a server whose traffic stops
 * gives the memory back instead of holding its last 512 studies for months. Dropping an entry is
 * exactly an eviction: a request that still holds what it read from the entry (a list, its keys or
 * history, a warm snapshot) keeps its own references, every later call checks the list it passes
 * against the entry's by identity (`e.completed !== completed` → null, built by the caller), a commit
 * extends a list only while the entry has one, and the study's next request loads it from storage.
 */
import type { BaseState, Observation } from '../../engine/index.js';
import type { KeyedEvaluation, ParameterValue, TrialCounts, TrialRecord } from '../../storage/index.js';
import type { Study } from '../studies/codec.js';
import type { SearchSpace } from '../studies/transforms.js';
import { HistoryLog } from './engine-history.js';
import type { ModelHistory } from '../results/index.js';
import { observationBytes } from '../pool/history-store.js';
import { dropUnusedSince } from '../common/idle-sweep.js';

/** The cache's bounds (see the header). */
export const STUDY_CACHE_BOUNDS = { studies: 512, bytes: 256 * 1024 * 1024 };

/**
 * Estimated bytes of what is kept per completed trial (V8's objects, not an exact measure): the
 * point record with its parameters, its key, its observation.
 */
const pointBytes = (p: CompletedPoint) => 160 + 8 * (p.point?.length ?? 0) + 64 * Object.keys(p.parameters).length;
const keyBytes = (k: string) => 48 + 2 * k.length;
/** An observation as a thread's history store counts it. */
const obsBytes = (o: Observation) => observationBytes(o.x.length);

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
  lastEvaluation: KeyedEvaluation | null;
}

/** What history needs of a completed trial. */
export interface CompletedPoint {
  trialId: number;
  completedAt: string;
  point: number[] | null;
  /** Null for a study of several objectives (`values`) and for an infeasible point. */
  value: number | null;
  /** The standard error reported with the value, or null (the ProbNES methods use it: ALGORITHM.md §28). */
  stderr: number | null;
  /** Several objectives' values, constraint values, infeasibility (results/outcomes.ts), when reported. */
  values?: number[] | null;
  constraints?: number[] | null;
  infeasible?: boolean | null;
  /** As handed out, in user units (what no-repeat.ts compares). */
  parameters: Readonly<Record<string, ParameterValue>>;
  /** Stopped early (failure_reason stopped_early): the model reads its value as results/stopped.ts says. */
  stopped: boolean;
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
  bytes: number;
}

/**
 * An entry's completed list as the engine reads it: the log of observations and the reader that
 * made them, as it stands after the last (results/stopped.ts: a stopped trial's observation depends
 * on the results before it).
 */
interface EngineHistory {
  reader: ModelHistory;
  log: HistoryLog;
  bytes: number;
}

interface Entry {
  engine: { revision: number; state: BaseState } | null;
  /** The cache's own array: appended to in place (see the header). */
  completed: CompletedPoint[] | null;
  completedBytes: number;
  /** Exactly the keys of `completed` (null: not built yet). */
  keys: CompletedKeys | null;
  /** Exactly the observations of `completed` (null: not built yet). */
  history: EngineHistory | null;
  space: { createdAt: string; value: SearchSpace } | null;
  warm: WarmSnapshot | null;
  /** When a request last read or set any of it (the cache's clock, ms): forgetIdle's measure. */
  usedAt: number;
}

const entryBytes = (e: Entry) => e.completedBytes + (e.keys?.bytes ?? 0) + (e.history?.bytes ?? 0);

export class StudyCache {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  /** Completed histories read from storage because no entry had them (counted for /metrics). */
  historyReads = 0;
  /** Entries brought up to date by reading only the trials completed since (another writer's). */
  catchUps = 0;
  /** Key sets built from a whole completed list (once per list read; extensions are not counted). */
  keyBuilds = 0;
  /** Engine histories built from a whole completed list (once per list; extensions are not counted). */
  historyBuilds = 0;

  constructor(
    private readonly maxStudies = STUDY_CACHE_BOUNDS.studies,
    private readonly maxBytes = STUDY_CACHE_BOUNDS.bytes,
    /** The clock of forgetIdle, in ms (tests inject one). */
    private readonly now: () => number = Date.now,
  ) {}

  /** Estimated bytes held (see the header). */
  get size(): { studies: number; bytes: number } {
    return { studies: this.entries.size, bytes: this.bytes };
  }

  private entry(studyId: string): Entry {
    let e = this.entries.get(studyId);
    if (e) {
      // Most recently used last, so eviction takes the first key.
      this.entries.delete(studyId);
      e.usedAt = this.now();
    } else {
      e = { engine: null, completed: null, completedBytes: 0, keys: null, history: null, space: null, warm: null, usedAt: this.now() };
      if (this.entries.size >= this.maxStudies) this.drop(this.entries.keys().next().value!);
    }
    this.entries.set(studyId, e);
    return e;
  }

  /** The study's entry, if any, marked as used now (its place in the eviction order unchanged): what reads go through. */
  private used(studyId: string): Entry | undefined {
    const e = this.entries.get(studyId);
    if (e) e.usedAt = this.now();
    return e;
  }

  /**
   * Drops every study no request has read or set anything of for `idleMs` (see the header: safe as
   * an eviction). Returns how many were dropped.
   */
  forgetIdle(idleMs: number): number {
    // A whole scan (at most maxStudies entries): reads mark an entry used without moving it.
    return dropUnusedSince(this.entries, this.now() - idleMs, (id) => this.drop(id));
  }

  private drop(studyId: string): void {
    const e = this.entries.get(studyId);
    if (!e) return;
    this.bytes -= entryBytes(e);
    this.entries.delete(studyId);
  }

  /**
   * After `e` (of `studyId`) grew by `grown` bytes: other studies are forgotten, least recently used
   * first, until the cache is within its byte bound; if `e` alone is over it, its list goes.
   * Returns whether `e` still has its list.
   */
  private grew(studyId: string, e: Entry, grown: number): boolean {
    this.bytes += grown;
    for (const id of this.entries.keys()) {
      if (this.bytes <= this.maxBytes) return true;
      if (id !== studyId) this.drop(id);
    }
    if (this.bytes <= this.maxBytes) return true;
    this.clearList(e);
    return false;
  }

  /** Forgets an entry's completed list with its keys and history. */
  private clearList(e: Entry): void {
    this.bytes -= entryBytes(e);
    e.completed = null;
    e.completedBytes = 0;
    e.keys = null;
    e.history = null;
  }

  engineRevision(studyId: string): number | null {
    return this.used(studyId)?.engine?.revision ?? null;
  }

  /** The cached state if it is the one of `revision`. */
  engine(studyId: string, revision: number): BaseState | null {
    const e = this.used(studyId)?.engine;
    return e && e.revision === revision ? e.state : null;
  }

  setEngine(studyId: string, revision: number, state: BaseState): void {
    this.entry(studyId).engine = { revision, state };
  }

  /** The completed trials if the cache has exactly `count` of them (see the header). Read-only for the caller. */
  completed(studyId: string, count: number): readonly CompletedPoint[] | null {
    const c = this.used(studyId)?.completed;
    return c && c.length === count ? c : null;
  }

  /** Keeps `completed` (the cache's own from now on: the caller must not change it). */
  setCompleted(studyId: string, completed: CompletedPoint[]): void {
    const e = this.entry(studyId);
    this.clearList(e);
    e.completed = completed;
    e.completedBytes = completed.reduce((b, p) => b + pointBytes(p), 0);
    this.grew(studyId, e, e.completedBytes);
  }

  /**
   * After a commit made from `loadedCount` completed trials: the ones it completed (`fresh`, in
   * completion order) join the entry's list, its keys and its history, if the entry is that state.
   */
  extendCompleted(studyId: string, loadedCount: number, fresh: readonly CompletedPoint[]): void {
    if (!this.entries.get(studyId)?.completed) return;
    const e = this.entry(studyId);
    const list = e.completed!;
    if (list.length !== loadedCount) {
      this.clearList(e);
      return;
    }
    if (fresh.length === 0) return;
    const last = list[list.length - 1];
    if (last === undefined || completionOrder(last, fresh[0]!) < 0) {
      this.append(studyId, e, fresh);
      return;
    }
    // Not after every stored result: a new list, and the history a new log (threads hold the old order).
    let grown = -(e.history?.bytes ?? 0);
    e.history = null;
    e.completed = mergeCompleted(list, fresh);
    grown += this.addPoints(e, fresh);
    this.grew(studyId, e, grown);
  }

  /**
   * The entry's list if it holds fewer than `count` trials (another writer completed the rest):
   * what a reader catches up from with storage's listCompletedTrialsAfter. Read-only for the caller.
   */
  behind(studyId: string, count: number): readonly CompletedPoint[] | null {
    const c = this.used(studyId)?.completed;
    return c && c.length > 0 && c.length < count ? c : null;
  }

  /**
   * Stored trials completed after every one of `list` (storage listed them after its last), if
   * `list` is still the entry's: appended in place, to its keys and history too. Whether it was.
   */
  appendStored(studyId: string, list: readonly CompletedPoint[], more: readonly CompletedPoint[]): boolean {
    const e = this.entries.get(studyId);
    if (!e || e.completed !== list) return false;
    const last = list[list.length - 1];
    if (more.length > 0 && last !== undefined && completionOrder(last, more[0]!) >= 0) return false;
    this.append(studyId, this.entry(studyId), more);
    return true;
  }

  /** Points that come after every one of the entry's list, to it, its keys and its history. */
  private append(studyId: string, e: Entry, points: readonly CompletedPoint[]): void {
    const list = e.completed!;
    for (const p of points) list.push(p);
    let grown = this.addPoints(e, points);
    if (e.history) {
      for (const p of points) {
        const o = e.history.reader.next(p);
        if (o) {
          e.history.log.obs.push(o);
          e.history.bytes += obsBytes(o);
          grown += obsBytes(o);
        }
      }
    }
    this.grew(studyId, e, grown);
  }

  /** Counts `points` into the list's bytes and adds their keys; returns the bytes added. */
  private addPoints(e: Entry, points: readonly CompletedPoint[]): number {
    let grown = 0;
    for (const p of points) grown += pointBytes(p);
    e.completedBytes += grown;
    if (e.keys) {
      for (const p of points) {
        const k = e.keys.of(p);
        if (!e.keys.set.has(k)) {
          e.keys.set.add(k);
          e.keys.bytes += keyBytes(k);
          grown += keyBytes(k);
        }
      }
    }
    return grown;
  }

  /**
   * The keys `of` the points of `completed` in `space`, if `completed` is the entry's list: the
   * cached set (built now if it was not). Null for any other list (one not cached: the caller
   * builds its own). Read-only for the caller (see the header).
   */
  completedKeys(studyId: string, completed: readonly CompletedPoint[], space: SearchSpace, of: (p: CompletedPoint) => string): ReadonlySet<string> | null {
    const e = this.used(studyId);
    if (!e || e.completed !== completed) return null;
    if (!e.keys || e.keys.space !== space) {
      this.keyBuilds++;
      const set = new Set(completed.map(of));
      let bytes = 0;
      for (const k of set) bytes += keyBytes(k);
      this.bytes -= e.keys?.bytes ?? 0;
      e.keys = { space, of, set, bytes };
      if (!this.grew(studyId, e, bytes)) return set;
    }
    return e.keys.set;
  }

  /**
   * The history log of `completed` (the observations a fresh reader from `start` makes of its
   * points, in order) and that reader after the last of them, if `completed` is the entry's list:
   * the cached log (built now if it was not). Null for any other list. `start` must make the same
   * reader for one study (the study's direction never changes). The reader is the cache's: fork it
   * to read further.
   */
  history(studyId: string, completed: readonly CompletedPoint[], start: () => ModelHistory): { log: HistoryLog; reader: ModelHistory } | null {
    const e = this.used(studyId);
    if (!e || e.completed !== completed) return null;
    if (!e.history) {
      this.historyBuilds++;
      const reader = start();
      const obs: Observation[] = [];
      let bytes = 0;
      for (const p of completed) {
        const o = reader.next(p);
        if (o) {
          obs.push(o);
          bytes += obsBytes(o);
        }
      }
      const log = new HistoryLog(obs);
      const history = { reader, log, bytes };
      e.history = history;
      if (!this.grew(studyId, e, bytes)) return history;
    }
    return e.history;
  }

  /** The study's search space, built by `build` the first time (per study and creation time). */
  space(studyId: string, createdAt: string, build: () => SearchSpace): SearchSpace {
    const e = this.entry(studyId);
    if (e.space?.createdAt !== createdAt) e.space = { createdAt, value: build() };
    return e.space.value;
  }

  /** What this process's last commit on the study left, if it belongs to `tenantId`. */
  warm(studyId: string, tenantId: string): WarmSnapshot | null {
    const w = this.used(studyId)?.warm;
    return w && w.tenantId === tenantId ? w : null;
  }

  setWarm(studyId: string, warm: WarmSnapshot | null): void {
    if (warm === null && !this.entries.has(studyId)) return;
    this.entry(studyId).warm = warm;
  }

  forget(studyId: string): void {
    this.drop(studyId);
  }

  /**
   * After another writer changed the study: its engine state and warm snapshot go; its completed
   * list stays, since every load checks it against storage's count, and a longer count is caught
   * up with by reading only what is new (study-snapshot.ts).
   */
  forgetState(studyId: string): void {
    const e = this.entries.get(studyId);
    if (!e) return;
    e.engine = null;
    e.warm = null;
  }
}
