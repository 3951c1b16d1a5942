/**
 * One study as the optimisation loop sees it during a request: the study, its search space, the
 * latest engine state and every trial, loaded once, changed in memory, then written back in one
 * commit (the service never holds a transaction across an engine call).
 */
import type { BaseState, Observation } from '../engine/index.js';
import type { NewTrial, Storage, StudyState, TrialRecord, TrialState, TrialUpdate } from '../storage/index.js';
import { StudyNotFoundError } from './errors.js';
import type { Study } from './studies.js';
import { searchSpace, type SearchSpace } from './transforms.js';

/** The fields of a trial that a request may change. */
export type TrialChange = Partial<Pick<TrialUpdate, 'state' | 'clientId' | 'leaseExpiresAt' | 'value' | 'stderr' | 'failureReason' | 'completedAt'>>;

export class StudySnapshot {
  /** Working copies, by ascending trial id. */
  readonly trials: TrialRecord[];
  private readonly byId = new Map<number, TrialRecord>();
  /** State each changed trial had when loaded: the guard of its update. */
  private readonly loadedState = new Map<number, TrialState>();
  /** Trials created by this request; their ids are the ones storage will assign (ids are consecutive). */
  private readonly added = new Set<number>();
  private nextId: number;
  /** The engine state as loaded, to tell whether this request changed it. */
  readonly loadedEngine: BaseState;
  /** A state change the loop makes itself (max_trials reached). */
  studyState: { state: StudyState; reason: string | null } | null = null;

  constructor(
    readonly study: Study,
    readonly space: SearchSpace,
    readonly revision: number,
    public engine: BaseState,
    trials: TrialRecord[],
  ) {
    this.trials = trials.map((t) => ({ ...t }));
    for (const t of this.trials) this.byId.set(t.trialId, t);
    this.nextId = this.trials.reduce((m, t) => Math.max(m, t.trialId), 0) + 1;
    this.loadedEngine = engine;
  }

  static async load(storage: Storage, tenantId: string, studyId: string): Promise<StudySnapshot> {
    const record = await storage.getStudy(tenantId, studyId);
    if (!record) throw new StudyNotFoundError(studyId);
    const study = record as unknown as Study;
    const [state, trials] = await Promise.all([storage.getEngineState(studyId), storage.listAllTrials(studyId)]);
    // Every study gets its engine state in the transaction that creates it.
    if (!state) throw new Error(`study ${studyId} has no engine state`);
    return new StudySnapshot(study, searchSpace(study.parameters, study.prior), state.revision, state.state as unknown as BaseState, trials);
  }

  /** The generation the engine is in: the number of updates (tells) so far. */
  get generation(): number {
    return this.engine.generation;
  }

  trial(trialId: number): TrialRecord | undefined {
    return this.byId.get(trialId);
  }

  /** A new trial, visible to the rest of this request at once (history, pending, counts). */
  add(t: NewTrial, now: string): TrialRecord {
    const record: TrialRecord = {
      studyId: this.study.id,
      trialId: this.nextId++,
      state: t.state,
      generation: t.generation,
      clientId: t.clientId ?? null,
      leaseExpiresAt: t.leaseExpiresAt ?? null,
      parameters: t.parameters,
      point: t.point,
      value: t.value ?? null,
      stderr: t.stderr ?? null,
      failureReason: null,
      source: t.source,
      createdAt: now,
      completedAt: t.completedAt ?? null,
      updatedAt: now,
    };
    this.trials.push(record);
    this.byId.set(record.trialId, record);
    this.added.add(record.trialId);
    return record;
  }

  addedIds(): number[] {
    return [...this.added];
  }

  /** The trials this request created, as storage inserts them (in id order). */
  newTrials(): NewTrial[] {
    return [...this.added].map((id) => {
      const t = this.byId.get(id)!;
      const { state, generation, parameters, point, source, clientId, leaseExpiresAt, value, stderr, completedAt } = t;
      return { state, generation, parameters, point, source, clientId, leaseExpiresAt, value, stderr, completedAt };
    });
  }

  change(trialId: number, change: TrialChange): TrialRecord {
    const t = this.byId.get(trialId)!;
    if (!this.added.has(trialId) && !this.loadedState.has(trialId)) this.loadedState.set(trialId, t.state);
    Object.assign(t, change);
    return t;
  }

  /** Changed trials as guarded storage updates. */
  updates(): TrialUpdate[] {
    return [...this.loadedState.entries()].map(([trialId, expectedState]) => {
      const t = this.byId.get(trialId)!;
      return {
        trialId,
        expectedState,
        state: t.state,
        clientId: t.clientId,
        leaseExpiresAt: t.leaseExpiresAt,
        value: t.value,
        stderr: t.stderr,
        failureReason: t.failureReason,
        completedAt: t.completedAt,
      };
    });
  }

  inState(...states: TrialState[]): TrialRecord[] {
    return this.trials.filter((t) => states.includes(t.state));
  }

  /** y the engine minimises: the value, negated for maximisation. */
  y(value: number): number {
    return this.study.direction === 'maximize' ? -value : value;
  }

  /**
   * Every completed trial (suggested and external) in completion order: by completion time, then
   * trial id (results of one request share a time; trial ids make the order total and stable, so
   * a reloaded study sees the same history).
   */
  completedInOrder(): TrialRecord[] {
    return this.inState('COMPLETED')
      .filter((t) => t.point !== null)
      .sort((a, b) => (a.completedAt! < b.completedAt! ? -1 : a.completedAt! > b.completedAt! ? 1 : a.trialId - b.trialId));
  }

  history(): Observation[] {
    return this.completedInOrder().map((t) => ({ x: t.point!, y: this.y(t.value!) }));
  }

  /** Points handed out or about to be, not yet observed (ProbNES conditions its batch on them). */
  pending(): number[][] {
    return this.inState('REQUESTED', 'ACTIVE')
      .filter((t) => t.point !== null)
      .map((t) => t.point!);
  }

  /** Suggested trials of the current generation, by trial id. */
  generationTrials(): TrialRecord[] {
    return this.trials.filter((t) => t.source === 'suggested' && t.generation === this.generation);
  }

  /**
   * The results the next update is made from, or null if it is not due: the first batch_size
   * completed trials of the current generation, in trial order (failed or abandoned points are
   * replaced by the extra points asked after them).
   */
  tellBatch(): TrialRecord[] | null {
    const done = this.generationTrials().filter((t) => t.state === 'COMPLETED');
    return done.length >= this.study.batchSize ? done.slice(0, this.study.batchSize) : null;
  }

  /** Trials that use up the max_trials budget: everything not failed or abandoned. */
  budgetUsed(): number {
    return this.inState('REQUESTED', 'ACTIVE', 'COMPLETED').length;
  }
}
