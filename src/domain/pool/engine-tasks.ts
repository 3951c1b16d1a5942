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
  | { op: 'model-view'; task: ModelViewTask };

export type EngineResult =
  | { op: 'init'; state: BaseState }
  | { op: 'ask'; state: BaseState; points: number[][] }
  | { op: 'tell'; state: BaseState }
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
      const { points, state } = strategy.ask(task.state, task.ctx, task.count);
      return { op: 'ask', state, points };
    }
    case 'tell':
      return { op: 'tell', state: strategy.tell(task.state, task.ctx) };
    case 'estimate':
      return { op: 'estimate', estimate: strategy.estimate ? strategy.estimate(task.state, task.history) : { predicted: null, predicted_std: null } };
  }
}
