/**
 * The study service: create, read, list, update and delete studies. Routes call it; it owns the
 * rules (state transitions, defaults, the effective prior and options) and talks to Storage only.
 */
import { importedEvaluations, outcomesOf, writeOutcomes } from '../results/index.js';
import { randomInt, randomUUID } from 'node:crypto';
import { METHOD_NAMES, methodFacts, resolveOptions } from '../../engine/index.js';
import type { LoopStore, ReportsStore, Storage, StudiesStore, StudyRecord, StudyState, SummariesStore, TrialRecord } from '../../storage/index.js';
import { InlineEngineRunner, type EngineRunner } from '../pool/engine-pool.js';
import { initialState, initSpec } from './engine-ops.js';
import { InvalidStateTransitionError, StudyNotFoundError, ValidationError, type FieldError } from '../common/errors.js';
import { Paginator } from './page-token.js';
import { alignToGrid, checkStudySpec, effectivePrior, type StudySpecInput } from './study-spec.js';
import { resolveFromPoints, resolveFromStudy } from './prior-sources.js';
import { MAX_SEED, type CreateStudyInput, type PriorSource, type StudyPatchInput } from './study-request.js';
import { onGrid, searchSpace, toInternal } from './transforms.js';
import { checkStudyCost } from './study-cost.js';
import { countsAsRead } from './lease-view.js';
import { writeLoopSettings } from './loop-settings.js';
import { readStudy, writeEngineState, writeJson, writeJsonObject, type Study } from './codec.js';
import { isStopped, STOPPED_EARLY } from './stopping-rule.js';

export type { Study } from './codec.js';

/** What the study service reads and writes: studies, whole-study imports, completed trials (warm start), lease counts, and the page-token secret. */
export type StudyServiceStorage = StudiesStore & ReportsStore & LoopStore & SummariesStore & Pick<Storage, 'getSetting'>;

export interface StudyServiceDeps {
  storage: StudyServiceStorage;
  /** Wall clock; injectable so tests control timestamps. */
  now?: () => Date;
  newId?: () => string;
  /** The seed for a study created without one. */
  newSeed?: () => number;
  /** Where engine calls run (a worker pool in the server); inline when absent. */
  engine?: EngineRunner;
  /** Largest study cost (dimension × batch × active set, study-cost.ts) accepted at creation. */
  maxStudyCost?: number;
}

/**
 * Several objectives or constraints need a method that searches for them (MethodFacts); a warm start
 * from an earlier study reads one objective's values, so it needs one objective too.
 */
function checkOutcomeMethod(request: CreateStudyInput): void {
  const several = (request.objectives?.length ?? 1) > 1;
  const constrained = (request.constraints?.length ?? 0) > 0;
  const errors: FieldError[] = [];
  const able = (fact: 'multiObjective' | 'constraints') => METHOD_NAMES.filter((m) => methodFacts(m)[fact]).join(', ');
  if (several && !methodFacts(request.method).multiObjective) errors.push({ path: '/method', message: `${request.method} searches one objective; with several use one of: ${able('multiObjective')}` });
  else if (constrained && !methodFacts(request.method).constraints) errors.push({ path: '/method', message: `${request.method} does not take constraints; use one of: ${able('constraints')}` });
  // The decomposition's members start from the prior (ALGORITHM.md §32.5): Powell's model keeps values a new scalarisation contradicts.
  if (several && request.options?.start_phase === 'powell') errors.push({ path: '/options/start_phase', message: 'Powell\'s start phase models one objective: with several objectives the search starts from the prior (start_phase off)' });
  if (several && request.prior?.from_study) errors.push({ path: '/prior/from_study', message: 'a warm start reads one objective: it is not available with several objectives' });
  if (errors.length > 0) throw new ValidationError(errors);
}

/** Allowed PATCH transitions; COMPLETED is final (its trials and history stay readable). */
const TRANSITIONS: Record<StudyState, readonly StudyState[]> = {
  ACTIVE: ['ACTIVE', 'PAUSED', 'COMPLETED'],
  PAUSED: ['PAUSED', 'ACTIVE', 'COMPLETED'],
  COMPLETED: ['COMPLETED'],
};
const REASON_BY_STATE: Record<StudyState, string | null> = { ACTIVE: null, PAUSED: 'paused_by_client', COMPLETED: 'completed_by_client' };

export class StudyService {
  private readonly storage: StudyServiceStorage;
  private readonly now: () => Date;
  private readonly newId: () => string;
  private readonly newSeed: () => number;
  private readonly engine: EngineRunner;
  private readonly pages: Paginator;
  private readonly maxStudyCost: number;

  constructor(deps: StudyServiceDeps) {
    this.maxStudyCost = deps.maxStudyCost ?? Infinity;
    this.storage = deps.storage;
    this.now = deps.now ?? (() => new Date());
    this.newId = deps.newId ?? (() => randomUUID());
    this.newSeed = deps.newSeed ?? (() => randomInt(0, MAX_SEED));
    this.engine = deps.engine ?? new InlineEngineRunner();
    this.pages = new Paginator(deps.storage);
  }

  async create(tenantId: string, given: CreateStudyInput): Promise<Study> {
    // The one direction a study has (the first objective's, with several): what every rule of one objective reads.
    const request = { ...given, direction: given.direction ?? given.objectives?.[0]?.direction ?? 'minimize' };
    const outcomes = writeOutcomes(request);
    checkOutcomeMethod(request);
    // A high off a parameter's grid becomes its last grid value first, so the prior, its checks and
    // the stored bounds all see the range that is searched.
    const { input, source, observations } = await this.resolvePrior(tenantId, alignToGrid(request));
    checkStudySpec(input);
    const { parameters, prior } = effectivePrior(input);
    const resolved = resolveOptions(input.method, parameters.length, input.options);
    // What the engine does with several objectives (no start phase), so the study's options say it.
    const options = (request.objectives?.length ?? 1) > 1 && 'start_phase' in resolved ? { ...resolved, start_phase: 'off' } : resolved;
    checkStudyCost(input.method, parameters.length, input.batch_size, options, input.max_trials ?? null, this.maxStudyCost);
    const seed = input.seed ?? this.newSeed();
    // The engine starts before the study exists and is written with it: if init fails there is no study.
    const space = searchSpace(parameters, prior);
    const spec = initSpec(input.method, input.batch_size, options, space, input.max_trials ?? null, outcomes ? outcomesOf({ direction: request.direction, outcomes }) : null);
    const engine = await initialState(this.engine, input.method, spec, seed);
    const createdAt = this.now().toISOString();
    const study = {
      id: this.newId(),
      tenantId,
      name: input.name,
      direction: request.direction,
      parameters: writeJson(parameters),
      prior: writeJson(source ? { ...prior, source } : prior),
      method: input.method,
      batchSize: input.batch_size,
      options,
      seed,
      maxTrials: input.max_trials ?? null,
      leaseSeconds: input.lease_seconds,
      knownOptimum: input.known_optimum ?? null,
      metadata: writeJsonObject(input.metadata),
      loopSettings: writeLoopSettings({ allowRepeats: input.allow_repeats, stopping: input.stopping ?? null }),
      outcomes,
      state: 'ACTIVE' as const,
      reason: null,
      createdAt,
    };
    if (observations.length === 0) return readStudy(await this.storage.createStudy(study, writeEngineState(engine)));
    // A warm start with the source's observations: the study, its generation-0 state and the copied
    // trials in one transaction (the import's unit of work), so no study exists without its data.
    const trials = observations.map((t, k) => {
      // On this study's grids (resolveFromStudy copies only values that are): as the grid values themselves.
      const x = space.parameters.map((p, i) => {
        const v = t.parameters[p.name]!;
        return typeof v === 'number' ? (onGrid(space, i, v) ?? v) : v;
      });
      return {
        trialId: k + 1, state: 'COMPLETED' as const, generation: 0, clientId: null, leaseExpiresAt: null,
        parameters: Object.fromEntries(space.parameters.map((p, i) => [p.name, x[i]!])), point: toInternal(space, x),
        // A stopped trial stays one (its value is where it was cut short: results/stopped.ts).
        value: t.value, stderr: t.stderr, failureReason: isStopped(t) ? STOPPED_EARLY : null, late: false, source: 'external' as const,
        createdAt, completedAt: createdAt, updatedAt: createdAt,
      };
    });
    const engineStates = [{ generation: 0, revision: 1, ...writeEngineState(engine), createdAt }];
    return readStudy(await this.storage.importStudy({ ...study, generation: 0, updatedAt: createdAt }, trials, engineStates, [], importedEvaluations(study, trials)));
  }

  /** The prior's data-informed forms become a joint prior here (prior-sources.ts); the others pass through. */
  private async resolvePrior(tenantId: string, request: CreateStudyInput): Promise<{ input: StudySpecInput; source: PriorSource | null; observations: TrialRecord[] }> {
    // The schema lets through exactly one form: {mean, covariance}, {from_points[, weights]} or {from_study}.
    const { mean, covariance, from_points, weights, from_study } = request.prior ?? {};
    if (from_points) {
      const r = resolveFromPoints(request, from_points, weights);
      return { input: { ...request, prior: r.prior }, source: r.source, observations: [] };
    }
    if (from_study) {
      // Another tenant's study is as absent as a missing one (404), as on every route.
      const src = await this.get(tenantId, from_study.study_id);
      const completed = await this.storage.listCompletedTrials(src.id);
      const r = resolveFromStudy(request, from_study, { id: src.id, direction: src.direction, parameters: src.parameters, completed });
      return { input: { ...request, prior: r.prior }, source: r.source, observations: r.observations };
    }
    return { input: { ...request, prior: mean && covariance ? { mean, covariance } : null }, source: null, observations: [] };
  }

  async get(tenantId: string, studyId: string): Promise<Study> {
    const record = await this.storage.getStudy(tenantId, studyId);
    if (!record) throw new StudyNotFoundError(studyId);
    return (await this.asRead([record]))[0]!;
  }

  async list(tenantId: string, page: { pageSize: number; pageToken?: string | null }): Promise<{ studies: Study[]; nextPageToken: string | null }> {
    const res = await this.pages.page(`studies:${tenantId}`, page.pageToken, (after) => this.storage.listStudies(tenantId, { after, limit: page.pageSize }));
    return { studies: await this.asRead(res.items), nextPageToken: res.nextPageToken };
  }

  /** Studies with their trial counts as they read now: trials whose lease ran out count as REQUESTED (lease.ts). */
  private async asRead(records: StudyRecord[]): Promise<Study[]> {
    const expired = await this.storage.expiredLeaseCounts(records.filter((r) => r.trialCounts.ACTIVE > 0).map((r) => r.id), this.now().toISOString());
    return records.map((r) => readStudy({ ...r, trialCounts: countsAsRead(r.trialCounts, expired[r.id] ?? 0) }));
  }

  async update(tenantId: string, studyId: string, patch: StudyPatchInput): Promise<Study> {
    const current = await this.get(tenantId, studyId);
    const changesState = patch.state !== undefined && patch.state !== current.state;
    if (patch.state !== undefined && !TRANSITIONS[current.state].includes(patch.state)) {
      throw new InvalidStateTransitionError(current.state, patch.state);
    }
    const record = await this.storage.updateStudy(tenantId, studyId, {
      name: patch.name,
      metadata: patch.metadata === undefined ? undefined : writeJsonObject(patch.metadata),
      state: changesState ? patch.state : undefined,
      reason: changesState ? REASON_BY_STATE[patch.state!] : undefined,
      updatedAt: this.now().toISOString(),
    });
    // Deleted between the read and the write.
    if (!record) throw new StudyNotFoundError(studyId);
    return (await this.asRead([record]))[0]!;
  }

  async delete(tenantId: string, studyId: string): Promise<void> {
    if (!(await this.storage.deleteStudy(tenantId, studyId))) throw new StudyNotFoundError(studyId);
  }
}
