/**
 * Engine calls as plain messages, so that they can run in a worker thread (ARCHITECTURE.md rule 6)
 * or inline with exactly the same result. Everything in and out is plain JSON.
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

export type EngineTask =
  | { op: 'init'; method: MethodName; spec: InitSpec; seed: number }
  | { op: 'ask'; method: MethodName; state: BaseState; ctx: AskContext; count: number }
  | { op: 'tell'; method: MethodName; state: BaseState; ctx: TellContext }
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
  | { op: 'ask'; state: BaseState; points: number[][] }
  | { op: 'tell'; state: BaseState }
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
      const { points, state } = strategy.ask(task.state, task.ctx, task.count);
      return { op: 'ask', state, points };
    }
    case 'tell':
      return { op: 'tell', state: strategy.tell(task.state, task.ctx) };
    case 'estimate':
      return { op: 'estimate', estimate: strategy.estimate ? strategy.estimate(task.state, task.history) : { predicted: null, predicted_std: null } };
  }
}
