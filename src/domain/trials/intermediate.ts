/**
 * Intermediate values of running trials and the answer to each: should the trial stop? A worker
 * reports `{step, value}` while it evaluates (a training curve); the value is stored once per
 * step (a retry of the same report is answered again, a different value for a stored step is a
 * conflict), then the study's stopping rule (stopping-rule.ts) decides from the trial's own values
 * and the completed trials' values at that step.
 *
 * A report does not change the trial and does not go through the optimisation loop: it is one
 * durable insert plus two reads, so a worker can report every epoch without slowing the loop.
 * A trial that stops is reported through the observations with `"stopped": true` and its last
 * value (loop/observations.ts); it is then COMPLETED with failure_reason `stopped_early`.
 */
import type { IntermediateRecord, Storage, TrialRecord } from '../../storage/index.js';
import { DomainError, StudyNotFoundError, TrialNotFoundError } from '../common/errors.js';
import { readStudy } from '../studies/codec.js';
import { givenUp } from '../loop/generation.js';
import { TrialNotActiveError } from '../loop/loop-errors.js';
import { decideStop, isStopped, type StopDecision } from '../studies/stopping-rule.js';
import type { IntermediateInput } from './intermediate-request.js';

/** A different value for a step the trial already reported. */
export class IntermediateConflictError extends DomainError {
  constructor(trialId: number, step: number, stored: number) {
    super('conflict', 'intermediate_value_conflict', `trial ${trialId} already reported value ${stored} at step ${step}; a step takes one value`);
  }
}

export interface IntermediateReport {
  trialId: number;
  step: number;
  value: number;
  decision: StopDecision;
}

export interface IntermediateServiceDeps {
  storage: Storage;
  now?: () => Date;
}

/** Whether the trial may still be evaluated by someone: leased, back from an expired lease to its last holder, or given up by the service (a late result is accepted). */
function running(t: TrialRecord): boolean {
  return t.state === 'ACTIVE' || (t.state === 'REQUESTED' && t.clientId !== null) || givenUp(t);
}

export class IntermediateService {
  private readonly storage: Storage;
  private readonly now: () => Date;

  constructor(deps: IntermediateServiceDeps) {
    this.storage = deps.storage;
    this.now = deps.now ?? (() => new Date());
  }

  async report(tenantId: string, studyId: string, trialId: number, input: IntermediateInput): Promise<IntermediateReport> {
    const record = await this.storage.getStudy(tenantId, studyId);
    if (!record) throw new StudyNotFoundError(studyId);
    const study = readStudy(record);
    const trial = await this.storage.getTrial(studyId, trialId);
    if (!trial) throw new TrialNotFoundError(studyId, trialId);
    const finished = !running(trial);
    let stored: IntermediateRecord;
    if (finished) {
      // A retry of a report made while it ran is answered again; anything new is refused.
      const [earlier] = (await this.storage.listIntermediate(studyId, [trialId])).filter((r) => r.step === input.step);
      if (!earlier) throw new TrialNotActiveError(trialId, trial.state, 'only a running trial reports intermediate values');
      stored = earlier;
    } else {
      stored = (await this.storage.recordIntermediate(studyId, { trialId, step: input.step, value: input.value, createdAt: this.now().toISOString() })).record;
    }
    if (stored.value !== input.value) throw new IntermediateConflictError(trialId, input.step, stored.value);
    const decision: StopDecision = finished
      ? { shouldStop: false, reason: 'trial_finished', detail: `trial ${trialId} is ${trial.state}`, median: null }
      : await this.decide(study.loop.stopping, study.direction, studyId, trialId, input.step);
    return { trialId, step: input.step, value: stored.value, decision };
  }

  private async decide(rule: Parameters<typeof decideStop>[0], direction: Parameters<typeof decideStop>[1], studyId: string, trialId: number, step: number): Promise<StopDecision> {
    if (rule === null) return decideStop(null, direction, { step, own: [], completed: 0, peersAtStep: [] });
    const [own, peers] = await Promise.all([this.storage.listIntermediate(studyId, [trialId]), this.storage.stepPeers(studyId, step)]);
    const completed = peers.filter((p) => !isStopped({ state: 'COMPLETED', failureReason: p.failureReason }));
    return decideStop(rule, direction, {
      step,
      own,
      completed: completed.length,
      peersAtStep: completed.flatMap((p) => (p.value === null ? [] : [p.value])),
    });
  }

  /** Every intermediate value of a study's trials (or of the given ones), by trial then step. */
  async list(tenantId: string, studyId: string, trialIds?: readonly number[]): Promise<IntermediateRecord[]> {
    if (!(await this.storage.getStudy(tenantId, studyId))) throw new StudyNotFoundError(studyId);
    return this.storage.listIntermediate(studyId, trialIds);
  }
}
