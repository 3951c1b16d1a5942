/**
 * Generation bookkeeping (ARCHITECTURE.md rule 4), on the in-memory study:
 *
 * - A generation g is the engine state after g updates. Its first S suggested trials are one
 *   jointly chosen batch, S = the generation's size: batch_size, or what the engine state asks for
 *   (lq-CMA-ES: the model-ranked candidates it wants evaluated now). When generation g has fewer
 *   than S suggested trials and a client needs points, the engine is asked for the rest of the
 *   batch at once (as REQUESTED trials), so a client asking count=1 gets one point of a joint
 *   batch and the next client the next one.
 * - When every point of the generation has been handed out (none REQUESTED), further requests ask
 *   for exactly what they need from the current distribution, with every REQUESTED/ACTIVE point as
 *   `pending` (ProbNES and BO condition the new points on them). These extras belong to generation g.
 * - The update (tell) is due when S suggested trials of generation g are COMPLETED: the batch is
 *   the first S of them in trial order, the history every completed trial in completion order. After it, REQUESTED trials of older generations (never handed out, or back
 *   from an expired lease) are ABANDONED with failure_reason "superseded": they were chosen for a
 *   distribution that no longer exists. ACTIVE ones stay; their results join the history later, and
 *   so do late results for the abandoned ones (observations.ts).
 * - An engine error during the update never loses results: they are written without the update,
 *   and the update is retried on the next request (suggestions or observations).
 */
import type { BaseState } from '../../engine/index.js';
import type { TrialRecord } from '../../storage/index.js';
import { callerOf, EngineBusyError } from '../pool/fair-runner.js';
import { handOut } from '../studies/engine-ops.js';
import { leaseExpiry } from './lease.js';
import { askEngine } from './engine-ask.js';
import { redraw, withoutRepeats } from './no-repeat.js';
import { runWithHistory } from './engine-history.js';
import type { StudySnapshot } from './study-snapshot.js';
import type { LoopContext } from './loop-context.js';

export type { LoopContext, LoopLogger } from './loop-context.js';

/** failure_reason of the trials the service abandons itself; the others are the clients' own verdicts. */
export const SUPERSEDED = 'superseded';
export const STUDY_COMPLETED = 'study_completed';

/** ABANDONED by the service, not by a client: a result that still arrives for it is accepted (late). */
export function givenUp(t: TrialRecord): boolean {
  return t.state === 'ABANDONED' && (t.failureReason === SUPERSEDED || t.failureReason === STUDY_COMPLETED);
}


/** Runs the due update, if any. Returns whether the distribution moved on. */
export async function advanceIfDue(snap: StudySnapshot, ctx: LoopContext): Promise<boolean> {
  const batch = snap.tellBatch();
  if (!batch || snap.study.state === 'COMPLETED') return false;
  // Outside the try: a history that changed under the request is a reload, not an engine failure.
  const history = await snap.history();
  // Each result as the history has it (a stopped trial's value: results/stopped.ts), so that the
  // methods that rank a generation rank what their model sees.
  const told = await snap.modelObservations(batch);
  let state: BaseState;
  try {
    const result = await runWithHistory(ctx.runner, callerOf(snap), history, (h) => ({ op: 'tell', method: snap.study.method, state: snap.engine, ctx: { batch: told, history: h } }));
    if (result.op !== 'tell') throw new Error(`engine answered ${result.op} to tell`);
    state = result.state;
  } catch (err) {
    // A full engine queue is not a failure: the results are kept and the next request updates.
    if (err instanceof EngineBusyError) ctx.log.warn({ study_id: snap.study.id, generation: snap.generation }, 'engine busy: the update waits for the next request');
    else ctx.log.error({ err, study_id: snap.study.id, generation: snap.generation }, 'engine update failed; results are kept and the update is retried on the next request');
    return false;
  }
  snap.engine = state;
  for (const t of snap.inState('REQUESTED')) {
    if (t.generation < state.generation) snap.change(t.trialId, { state: 'ABANDONED', failureReason: SUPERSEDED, leaseExpiresAt: null });
  }
  return true;
}

/**
 * New trials for a client that needs `need` more points: the rest of the generation's joint batch
 * (or just `need` extras once it is all out), capped by the max_trials budget. The first `need`
 * are leased to the client, the rest wait as REQUESTED. Returns the leased ones.
 */
export async function askMore(snap: StudySnapshot, need: number, clientId: string, ctx: LoopContext): Promise<TrialRecord[]> {
  const { study } = snap;
  const rest = Math.max(0, snap.generationSize - snap.generationTrials().length);
  let count = Math.max(need, rest);
  if (study.maxTrials !== null) count = Math.min(count, study.maxTrials - snap.budgetUsed());
  if (count <= 0) return [];
  const history = await snap.history();
  let points = await askEngine(snap, ctx, history, count, snap.pending());
  // No wasted repeats (no-repeat.ts): a point that repeats a configuration of the study is redrawn
  // (the configurations taken come from the per-study cache, extended as results arrive).
  if (!study.loop.allowRepeats) points = await withoutRepeats(snap, points, redraw(snap, ctx, history));
  const nowIso = ctx.now.toISOString();
  const lease = leaseExpiry(ctx.now, study.leaseSeconds);
  return points
    .map((u, i) => {
      const { parameters, point } = handOut(snap.space, u);
      const leased = i < need;
      return snap.add(
        { state: leased ? 'ACTIVE' : 'REQUESTED', generation: snap.generation, parameters, point, source: 'suggested', clientId: leased ? clientId : null, leaseExpiresAt: leased ? lease : null },
        nowIso,
      );
    })
    .slice(0, need);
}

/**
 * How many of `trials` are extras of the current generation: beyond its first generationSize live
 * points (failed or abandoned ones do not count: a point handed out in place of a failed one is
 * still waited for). The update is made from generationSize results of the generation, so with
 * generationSize + e points out, e results miss it whichever come last: they never move the
 * distribution and only join the data a model learns from (ProbNES's GP), as late results do.
 */
export function extrasAmong(snap: StudySnapshot, trials: readonly TrialRecord[]): number {
  const live = snap.generationTrials().filter((t) => t.state !== 'FAILED' && t.state !== 'ABANDONED');
  const beyond = new Set(live.slice(snap.generationSize).map((t) => t.trialId));
  return trials.filter((t) => beyond.has(t.trialId)).length;
}

/** When max_trials results are in the study is COMPLETED; points nobody holds are abandoned. */
export function completeIfDone(snap: StudySnapshot): void {
  const { study } = snap;
  if (study.maxTrials === null || study.state === 'COMPLETED' || snap.count('COMPLETED') < study.maxTrials) return;
  snap.studyState = { state: 'COMPLETED', reason: 'max_trials_reached' };
  for (const t of snap.inState('REQUESTED')) snap.change(t.trialId, { state: 'ABANDONED', failureReason: STUDY_COMPLETED });
}
