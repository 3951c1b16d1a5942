/**
 * Engine calls as plain messages, so that they can run in a worker thread (ARCHITECTURE.md rule 6)
 * or inline with exactly the same result. Everything in and out is plain JSON. The history of an
 * ask or a tell is either the observations themselves or a reference to what the running thread
 * holds of it (history-store.ts); a thread that does not hold it answers `history-miss`, and the
 * caller sends the call again with the whole history.
 */
import {
  getStrategy,
  Rng,
  type AskContext,
  type BaseState,
  type Estimate,
  type InitSpec,
  type MethodName,
  type Observation,
  type TellContext,
  runModelView,
  type ModelViewResult,
  type ModelViewTask,
} from '../../engine/index.js';
import { currentThread, isHistoryDelta, threadHistory, type HistoryDelta } from './history-store.js';

/** A history as sent: the observations, or what is new since what the thread holds (history-store.ts). */
export type WireHistory = Observation[] | HistoryDelta;

export type EngineTask =
  | { op: 'init'; method: MethodName; spec: InitSpec; seed: number }
  | { op: 'ask'; method: MethodName; state: BaseState; ctx: Omit<AskContext, 'history'> & { history: WireHistory }; count: number }
  | { op: 'tell'; method: MethodName; state: BaseState; ctx: Omit<TellContext, 'history'> & { history: WireHistory } }
  | { op: 'estimate'; method: MethodName; state: BaseState; history: Observation[] }
  /** A read-only view of a study's GP (dashboard plots; src/engine/views). */
  | { op: 'model-view'; task: ModelViewTask };

export type EngineResult =
  | { op: 'init'; state: BaseState }
  /** `thread`: the thread that resolved a history sent by reference (it now holds it). */
  | { op: 'ask'; state: BaseState; points: number[][]; thread?: number }
  | { op: 'tell'; state: BaseState; thread?: number }
  /** The thread (`thread`) does not hold the history the call refers to: send it again with the whole history. */
  | { op: 'history-miss'; thread: number }
  | { op: 'estimate'; estimate: Estimate }
  | { op: 'model-view'; view: ModelViewResult };

/** Runs one engine call. Pure: the same task always gives the same result. */
export function runEngineTask(task: EngineTask): EngineResult {
  if (task.op === 'model-view') return { op: 'model-view', view: runModelView(task.task) };
  const strategy = getStrategy(task.method);
  switch (task.op) {
    case 'init':
      return { op: 'init', state: strategy.init(task.spec, Rng.fromSeed(task.seed)) };
    case 'ask': {
      const history = resolveHistory(task.ctx.history);
      if (!history) return { op: 'history-miss', thread: currentThread() };
      const { points, state } = strategy.ask(task.state, { ...task.ctx, history }, task.count);
      return { op: 'ask', state, points, ...threadOf(task.ctx.history) };
    }
    case 'tell': {
      const history = resolveHistory(task.ctx.history);
      if (!history) return { op: 'history-miss', thread: currentThread() };
      return { op: 'tell', state: strategy.tell(task.state, { ...task.ctx, history }), ...threadOf(task.ctx.history) };
    }
    case 'estimate':
      return { op: 'estimate', estimate: strategy.estimate ? strategy.estimate(task.state, task.history) : { predicted: null, predicted_std: null } };
  }
}

function resolveHistory(h: WireHistory): Observation[] | null {
  return isHistoryDelta(h) ? threadHistory.resolve(h) : h;
}

const threadOf = (h: WireHistory) => (isHistoryDelta(h) ? { thread: currentThread() } : {});
