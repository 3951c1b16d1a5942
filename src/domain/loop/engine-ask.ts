/** The loop's engine ask: new points from the study's strategy, the snapshot's engine state advanced. */
import { callerOf, EngineBusyError } from '../pool/fair-runner.js';
import { EngineUnavailableError } from '../studies/engine-ops.js';
import type { LoopContext } from './loop-context.js';
import type { StudySnapshot } from './study-snapshot.js';
import { runWithHistory, type LoopHistory } from './engine-history.js';

/**
 * `count` points given the history and the points pending (`what` names the ask in the log: a
 * first ask or a redraw). A full engine queue is rethrown (429 with Retry-After, nothing written);
 * any other failure is logged and becomes EngineUnavailableError.
 */
export async function askEngine(snap: StudySnapshot, ctx: LoopContext, history: LoopHistory, count: number, pending: number[][], what = 'ask'): Promise<number[][]> {
  try {
    const result = await runWithHistory(ctx.runner, callerOf(snap), history, (h) => ({ op: 'ask', method: snap.study.method, state: snap.engine, ctx: { history: h, pending }, count }));
    if (result.op !== 'ask') throw new Error(`engine answered ${result.op} to ask`);
    snap.engine = result.state;
    return result.points;
  } catch (err) {
    if (err instanceof EngineBusyError) throw err;
    ctx.log.error({ err, study_id: snap.study.id, generation: snap.generation }, `engine ${what} failed`);
    throw new EngineUnavailableError(err);
  }
}
