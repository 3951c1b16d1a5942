/**
 * The history an engine call gets, sent as what is new rather than all of it.
 *
 * Every ask and tell takes the study's whole history (every result, in completion order). The
 * per-study cache keeps it as a log (HistoryLog: the stored results as the engine reads them,
 * appended to as commits store more); each engine thread keeps its own copy of the logs it has
 * seen (src/domain/pool/history-store.ts). A call then carries the observations after the least
 * any thread that took this log in is known to hold (`from`), at most MAX_TAIL of them, plus the
 * request's own results: O(batch) per call instead of a structured clone of the whole history.
 * A thread that does not hold that much answers a miss; the call is sent again whole (to whichever
 * thread takes it), and so is the next one until a call has reached the thread that missed, so
 * that a pool that hands a study's calls to its threads in turn cannot keep one of them missing.
 *
 * What a thread is known to hold is only what was stored when it took the log in (`stored`):
 * the request's own results may still be refused by its commit, so no later call relies on them.
 */
import type { Observation } from '../../engine/index.js';
import type { EngineResult, EngineTask, WireHistory } from '../pool/engine-tasks.js';
import type { EngineCaller } from '../pool/fair-runner.js';
import type { EngineRunner } from '../pool/engine-pool.js';

/**
 * A thread further behind than this many observations is no longer sent tails from where it is:
 * it gets the whole history on its next call (a miss), so that a thread that stopped (an idle
 * worker ended) cannot make every later call carry what it missed.
 */
export const MAX_TAIL = 4096;

let logIds = 0;

/**
 * A study's stored results in completion order, as the engine reads them; appended to only
 * (StudyCache). Its id is unique in the process: a list that changes otherwise is a new log.
 */
export class HistoryLog {
  // Stryker disable next-line UpdateOperator: counting down gives ids just as unique in the process (h-1, h-2, …), which is all an id must be
  readonly id = `h${++logIds}`;
  /** Thread id → how many of `obs` that thread holds (all stored). */
  readonly held = new Map<number, number>();
  /** Threads that answered a miss and have not taken the log in since. */
  readonly missed = new Set<number>();

  constructor(readonly obs: Observation[]) {}
}

/** One request's history: a log's stored part and the request's own results after it, or a plain list. */
export type LoopHistory = { log: HistoryLog; stored: number; fresh: Observation[] } | { plain: Observation[] };

export const plainHistory = (plain: Observation[]): LoopHistory => ({ plain });

/** Observations in the history (for callers that need its size). */
export const historyLength = (h: LoopHistory): number => ('plain' in h ? h.plain.length : h.stored + h.fresh.length);

/** The history as an engine call sends it; `whole`: everything (after a miss). */
export function wireHistory(h: LoopHistory, whole = false): WireHistory {
  if ('plain' in h) return h.plain;
  const { log, stored, fresh } = h;
  let from = whole ? 0 : stored;
  if (!whole) {
    for (const [thread, n] of log.held) {
      if (n > stored || stored - n > MAX_TAIL) log.held.delete(thread);
      else from = Math.min(from, n);
    }
    if (log.held.size === 0 || log.missed.size > 0) from = 0;
  }
  const tail = log.obs.slice(from, stored);
  for (const o of fresh) tail.push(o);
  return { log: log.id, from, tail, length: stored + fresh.length, stored };
}

/**
 * Runs the task `make` builds for the history; on a miss, once more with the whole history. Records
 * which thread now holds the log.
 */
export async function runWithHistory(runner: EngineRunner, caller: EngineCaller, h: LoopHistory, make: (history: WireHistory) => EngineTask): Promise<EngineResult> {
  let { result } = await runner.run(make(wireHistory(h)), caller);
  if (result.op === 'history-miss') {
    if ('log' in h) h.log.missed.add(result.thread);
    // Stryker disable next-line BooleanLiteral: the thread that missed is in log.missed now, which makes wireHistory send everything (from 0) anyway; `true` says so here
    ({ result } = await runner.run(make(wireHistory(h, true)), caller));
  }
  if (result.op === 'history-miss') throw new Error('engine thread did not take a whole history in');
  if ('log' in h && (result.op === 'ask' || result.op === 'tell') && result.thread !== undefined) {
    h.log.held.set(result.thread, h.stored);
    h.log.missed.delete(result.thread);
  }
  return result;
}
