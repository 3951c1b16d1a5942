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
  | { op: 'model-view'; task: ModelViewTask | GridAxesTask };

/**
 * A grid view given by its axes instead of its n² points: the points are u = centre + a·cx + b·cy
 * for b in `dy` (rows), a in `dx` (columns), the first `inputs` coordinates; those past the d
 * numeric ones are the centre's (choice indices). Built here, in the worker, because a 60 × 60 grid
 * of 100 parameters is 360,000 numbers the event loop would otherwise compute and then copy to the
 * worker thread (tens of milliseconds during which it answers no one).
 */
export interface GridAxesTask {
  view: 'grid-axes';
  model: ModelViewTask['model'];
  axes: { centre: number[]; cx: number[]; cy: number[]; dx: number[]; dy: number[]; d: number; inputs: number };
}

/** The n² points of a grid given by its axes (GridAxesTask), rows along dy. */
export function gridPoints(axes: GridAxesTask['axes']): number[][] {
  const { centre, cx, cy, dx, dy, d, inputs } = axes;
  const points: number[][] = [];
  for (const b of dy) {
    for (const a of dx) {
      const u = new Array<number>(inputs);
      for (let k = 0; k < inputs; k++) u[k] = k < d ? centre[k]! + a * cx[k]! + b * cy[k]! : centre[k]!;
      points.push(u);
    }
  }
  return points;
}

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
  if (task.op === 'model-view') {
    const t = task.task;
    return { op: 'model-view', view: runModelView(t.view === 'grid-axes' ? { view: 'grid', model: t.model, points: gridPoints(t.axes) } : t) };
  }
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
      const h = task.ctx.history;
      const resolved = isHistoryDelta(h) ? threadHistory.resolvePacked(h) : { history: h, packed: null };
      if (!resolved) return { op: 'history-miss', thread: currentThread() };
      // The packed copy the thread keeps beside a log (history-store.ts): the update's scan of the whole history reads it.
      const ctx = { ...task.ctx, history: resolved.history, ...(resolved.packed ? { packed: resolved.packed } : {}) };
      return { op: 'tell', state: strategy.tell(task.state, ctx), ...threadOf(h) };
    }
    case 'estimate':
      return { op: 'estimate', estimate: strategy.estimate ? strategy.estimate(task.state, task.history) : { predicted: null, predicted_std: null } };
  }
}

function resolveHistory(h: WireHistory): Observation[] | null {
  return isHistoryDelta(h) ? threadHistory.resolve(h) : h;
}

const threadOf = (h: WireHistory) => (isHistoryDelta(h) ? { thread: currentThread() } : {});
