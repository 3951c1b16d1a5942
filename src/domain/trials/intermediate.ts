/**
 * Intermediate values of running trials and the answer to each: should the trial stop? A worker
 * reports `{step, value}` while it evaluates (a training curve); the value is stored once per
 * step (a retry of the same report is answered again, a different value for a stored step is a
 * conflict), then the study's stopping rule (stopping-rule.ts) decides from the trial's own values
 * and the completed trials' values at that step.
 *
 * A report does not change the trial and does not go through the optimisation loop: it is one
 * durable insert plus at most three index reads, so a worker can report every epoch without slowing
 * the loop. What a report at step s costs (decide): the trial's own best value up to s (one range of
 * the primary key, aggregated in the database: O(its steps ≤ s)), the completed trials' values at s
 * from the (study, step) index (O(trials that reported s): the median needs each of them), and,
 * only while fewer than warmup_trials of those are peers, a count of the completed trials that stops
 * at warmup_trials. It never reads the study's other steps; the curves are read in pages (listPage).
 *
 * GET intermediate_values is read in pages of at most INTERMEDIATE_LIMITS.maxPageSize values, in
 * (trial id, step) order from the primary key, so a page costs O(page) however large the study: a
 * trial's curve longer than the room left on a page continues at the start of the next page.
 *
 * A trial that stops is reported through the observations with `"stopped": true` and its last
 * value (loop/observations.ts); it is then COMPLETED with failure_reason `stopped_early`.
 */
import type { IntermediateCursor, IntermediateRecord, IntermediateStore, LoopStore, Storage, StudiesStore, TrialRecord } from '../../storage/index.js';
import { DomainError, InvalidPageTokenError, StudyNotFoundError, TrialNotFoundError } from '../common/errors.js';
import { Paginator } from '../studies/page-token.js';
import { readStudy } from '../studies/codec.js';
import { givenUp } from '../loop/generation.js';
import { TrialNotActiveError } from '../loop/loop-errors.js';
import { decideStop, isStopped, STOPPED_EARLY, type StopDecision } from '../studies/stopping-rule.js';
import type { IntermediateInput } from './intermediate-request.js';
import { bestOf, objectiveOf, type Objective } from '../results/index.js';

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

/** Documented limits of GET intermediate_values (docs/early-stopping.md "Reading the curves"): values per page. */
export const INTERMEDIATE_LIMITS = {
  defaultPageSize: 1000,
  maxPageSize: 10_000,
} as const;

/** One page of the curves: values in (trial id, step) order, and the token of the next page (null on the last). */
export interface IntermediatePage {
  values: IntermediateRecord[];
  nextPageToken: string | null;
}

/** The cursor inside a page token: `<trial id>:<step>` of the last value served. */
function encodeCursor(c: IntermediateCursor): string {
  return `${c.trialId}:${c.step}`;
}

function decodeCursor(s: string): IntermediateCursor {
  const m = /^(\d+):(\d+)$/.exec(s);
  const c = m ? { trialId: Number(m[1]), step: Number(m[2]) } : null;
  if (!c || !Number.isSafeInteger(c.trialId) || !Number.isSafeInteger(c.step)) throw new InvalidPageTokenError();
  return c;
}

/** What the intermediate-value service reads and writes: the study and trial it checks, the values, and the page-token secret. */
export type IntermediateServiceStorage = StudiesStore & LoopStore & IntermediateStore & Pick<Storage, 'getSetting'>;

export interface IntermediateServiceDeps {
  storage: IntermediateServiceStorage;
  now?: () => Date;
}

/** Whether the trial may still be evaluated by someone: leased, back from an expired lease to its last holder, or given up by the service (a late result is accepted). */
function running(t: TrialRecord): boolean {
  return t.state === 'ACTIVE' || (t.state === 'REQUESTED' && t.clientId !== null) || givenUp(t);
}

export class IntermediateService {
  private readonly storage: IntermediateServiceStorage;
  private readonly now: () => Date;
  private readonly pages: Paginator;

  constructor(deps: IntermediateServiceDeps) {
    this.storage = deps.storage;
    this.pages = new Paginator(deps.storage);
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
      // The first value after (trial, step − 1): the stored one at this step, if any (one index seek).
      const [next] = await this.storage.listIntermediatePage(studyId, { after: { trialId, step: input.step - 1 }, limit: 1 });
      const earlier = next?.trialId === trialId && next.step === input.step ? next : undefined;
      if (!earlier) throw new TrialNotActiveError(trialId, trial.state, 'only a running trial reports intermediate values');
      stored = earlier;
    } else {
      stored = (await this.storage.recordIntermediate(studyId, { trialId, step: input.step, value: input.value, createdAt: this.now().toISOString() })).record;
    }
    if (stored.value !== input.value) throw new IntermediateConflictError(trialId, input.step, stored.value);
    const decision: StopDecision = finished
      ? { shouldStop: false, reason: 'trial_finished', detail: `trial ${trialId} is ${trial.state}`, median: null }
      : await this.decide(study.loop.stopping, objectiveOf(study), studyId, trialId, input.step);
    return { trialId, step: input.step, value: stored.value, decision };
  }

  /**
   * The rule's answer from bounded reads (see the module comment for their cost); decideStop sees the
   * same decision it would from every value of the study:
   *   - own: only the trial's best value through `step` matters (its min when minimising, max when
   *     maximising), so the database aggregates it and own is that one value;
   *   - peers: the completed, not stopped trials with a value at `step`, from the (study, step) index;
   *   - completed: compared with warmup_trials only, so it is counted only while the peers alone do
   *     not reach warmup_trials, and then counting stops at warmup_trials (exact below it, which is
   *     when the answer's detail quotes it).
   */
  private async decide(rule: Parameters<typeof decideStop>[0], objective: Objective, studyId: string, trialId: number, step: number): Promise<StopDecision> {
    if (rule === null) return decideStop(null, objective, { step, own: [], completed: 0, peersAtStep: [] });
    // Before min_steps the rule answers without looking at any value.
    if (step < rule.min_steps) return decideStop(rule, objective, { step, own: [], completed: 0, peersAtStep: [] });
    const [range, peers] = await Promise.all([this.storage.intermediateRange(studyId, trialId, step), this.storage.stepPeers(studyId, step)]);
    const peersAtStep = peers.filter((p) => !isStopped({ state: 'COMPLETED', failureReason: p.failureReason })).map((p) => p.value);
    const completed =
      peersAtStep.length >= rule.warmup_trials ? peersAtStep.length : await this.storage.countCompleted(studyId, { exceptFailureReason: STOPPED_EARLY, atMost: rule.warmup_trials });
    const own = range === null ? [] : [{ step, value: bestOf(objective, [range.min, range.max]) }];
    return decideStop(rule, objective, { step, own, completed, peersAtStep });
  }

  /**
   * One page of a study's intermediate values, in (trial id, step) order: at most `pageSize` values
   * after the token's position, read from the primary key (O(pageSize)). The token is bound to the
   * study (a token of another study or listing is invalid_page_token).
   */
  async listPage(tenantId: string, studyId: string, q: { pageSize?: number; pageToken?: string | null } = {}): Promise<IntermediatePage> {
    if (!(await this.storage.getStudy(tenantId, studyId))) throw new StudyNotFoundError(studyId);
    const pageSize = q.pageSize ?? INTERMEDIATE_LIMITS.defaultPageSize;
    const page = await this.pages.page(`intermediate:${studyId}`, q.pageToken, async (after) => {
      // One value more than the page tells whether another page follows.
      const rows = await this.storage.listIntermediatePage(studyId, { after: after === null ? null : decodeCursor(after), limit: pageSize + 1 });
      const items = rows.slice(0, pageSize);
      const last = items[items.length - 1];
      return { items, next: rows.length > pageSize && last ? encodeCursor(last) : null };
    });
    return { values: page.items, nextPageToken: page.nextPageToken };
  }

  /** Every intermediate value of a study's trials (or of the given ones), by trial then step. */
  async list(tenantId: string, studyId: string, trialIds?: readonly number[]): Promise<IntermediateRecord[]> {
    if (!(await this.storage.getStudy(tenantId, studyId))) throw new StudyNotFoundError(studyId);
    return this.storage.listIntermediate(studyId, trialIds);
  }
}
