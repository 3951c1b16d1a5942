/**
 * The read side of a study: its trials, the best point, the regret history and the search
 * distribution. Reads only; the suggest/observe loop writes what is read here.
 */
import { EngineError, type Diagnostics, type Observation } from '../../engine/index.js';
import type { EngineStateRecord, Storage, TrialRecord, TrialState } from '../../storage/index.js';
import { engineY, isBetter, readEngineState, readStudy, type Direction } from './codec.js';
import type { Study } from './studies.js';
import type { NumericParameterSpec } from './study-spec.js';
import { centrePoint, internalDistribution, priorDistribution, userDistribution } from './distribution.js';
import type { ParamValue } from './study-request.js';
import type { EngineRunner } from '../pool/engine-pool.js';
import { StudyNotFoundError, TrialNotFoundError } from '../common/errors.js';
import { Paginator } from './page-token.js';
import { materialize, searchSpace, type SearchSpace } from './transforms.js';

export interface ReportsServiceDeps {
  storage: Storage;
  /** Runs the engine's `estimate` (the server's shared runner); without one, or for a method without a model, predictions are null. */
  engine?: EngineRunner | null;
}

export interface BestReport {
  observed: { trialId: number; parameters: Record<string, ParamValue>; value: number } | null;
  estimated: { parameters: Record<string, ParamValue>; predictedValue: number | null; predictedStd: number | null };
}

export interface Evaluation {
  /** 1-based: the number of evaluations so far. */
  index: number;
  trialId: number;
  value: number;
  bestSoFar: number;
  regret: number | null;
}

export interface GenerationReport {
  generation: number;
  mean: Record<string, ParamValue>;
  std: number[];
  integralMean: number | null;
  integralStd: number | null;
  nActive: number | null;
}

export interface DistributionReport {
  generation: number;
  mean: Record<string, ParamValue>;
  meanTransformed: number[];
  covariance: number[][];
  std: number[];
  /** Of the numeric parameters, in their order (the order of the covariance). */
  scale: NumericParameterSpec['scale'][];
  probabilities: Record<string, number[]>;
}

/** Completion order; trials completed by one atomic report share a timestamp and keep id order. */
function byCompletion(a: TrialRecord, b: TrialRecord): number {
  const ta = a.completedAt ?? '';
  const tb = b.completedAt ?? '';
  return ta < tb ? -1 : ta > tb ? 1 : a.trialId - b.trialId;
}

export class ReportsService {
  private readonly storage: Storage;
  private readonly engine: EngineRunner | null;
  private readonly pages: Paginator;

  constructor(deps: ReportsServiceDeps) {
    this.storage = deps.storage;
    this.engine = deps.engine ?? null;
    this.pages = new Paginator(deps.storage);
  }

  async listTrials(tenantId: string, studyId: string, q: { state?: TrialState; pageSize: number; pageToken?: string | null }): Promise<{ trials: TrialRecord[]; nextPageToken: string | null }> {
    await this.study(tenantId, studyId);
    // The filter is part of the scope: a token from one listing cannot continue another.
    const scope = `trials:${studyId}:${q.state ?? '*'}`;
    const page = await this.pages.page(scope, q.pageToken, (after) => this.storage.listTrials(studyId, { after, limit: q.pageSize, ...(q.state ? { state: q.state } : {}) }));
    return { trials: page.items, nextPageToken: page.nextPageToken };
  }

  async getTrial(tenantId: string, studyId: string, trialId: number): Promise<TrialRecord> {
    await this.study(tenantId, studyId);
    const trial = await this.storage.getTrial(studyId, trialId);
    if (!trial) throw new TrialNotFoundError(studyId, trialId);
    return trial;
  }

  async best(tenantId: string, studyId: string): Promise<BestReport> {
    const study = await this.study(tenantId, studyId);
    const completed = (await this.storage.listAllTrials(studyId)).filter((t) => t.state === 'COMPLETED' && t.value !== null).sort(byCompletion);
    let best: TrialRecord | null = null;
    // Strictly better only: among equal values the first one found keeps the title.
    for (const t of completed) if (!best || isBetter(study.direction, t.value!, best.value!)) best = t;
    const space = spaceOf(study);
    const state = await this.storage.getEngineState(studyId);
    const dist = state ? internalDistribution(state.state, space) : priorDistribution(space);
    const predicted = state ? await this.estimate(study, state, completed) : { predicted: null, predicted_std: null };
    return {
      observed: best ? { trialId: best.trialId, parameters: best.parameters, value: best.value! } : null,
      // The mean as it would be handed out (rounded, inside the bounds): a point one can evaluate.
      estimated: { parameters: materialize(space, centrePoint(dist)).parameters, predictedValue: predicted.predicted, predictedStd: predicted.predicted_std },
    };
  }

  async history(tenantId: string, studyId: string): Promise<{ knownOptimum: number | null; evaluations: Evaluation[]; generations: GenerationReport[] }> {
    const study = await this.study(tenantId, studyId);
    const completed = (await this.storage.listAllTrials(studyId)).filter((t) => t.state === 'COMPLETED' && t.value !== null).sort(byCompletion);
    const evaluations = regretHistory(completed, study.direction, study.knownOptimum);
    const space = spaceOf(study);
    const generations = (await this.storage.listEngineStates(studyId)).map((rec) => {
      const dist = userDistribution(space, internalDistribution(rec.state, space));
      const diag: Partial<Diagnostics> | undefined = readEngineState(studyId, study.method, rec).diagnostics;
      return {
        generation: rec.generation,
        mean: dist.mean,
        std: dist.std,
        // The engine integrates y; report E_ν[value] in the study's own units.
        integralMean: mapNull(finiteOrNull(diag?.integral_mean), (m) => engineY(study.direction, m)),
        integralStd: finiteOrNull(diag?.integral_std),
        nActive: finiteOrNull(diag?.n_active),
      };
    });
    return { knownOptimum: study.knownOptimum, evaluations, generations };
  }

  async distribution(tenantId: string, studyId: string): Promise<DistributionReport> {
    const study = await this.study(tenantId, studyId);
    const space = spaceOf(study);
    const state = await this.storage.getEngineState(studyId);
    const dist = userDistribution(space, state ? internalDistribution(state.state, space) : priorDistribution(space));
    return {
      generation: state?.generation ?? study.generation,
      mean: dist.mean,
      meanTransformed: dist.meanTransformed,
      covariance: dist.covariance,
      std: dist.std,
      scale: space.numeric.map((p) => p.scale),
      probabilities: dist.probabilities,
    };
  }

  /** The engine's prediction at the distribution mean, in the study's direction. */
  private async estimate(study: Study, rec: EngineStateRecord, completed: TrialRecord[]) {
    const none = { predicted: null, predicted_std: null };
    if (!this.engine) return none;
    // The engine minimises y (codec.ts); only points it could learn from count.
    const history: Observation[] = completed.filter((t) => t.point !== null).map((t) => ({ x: t.point!, y: engineY(study.direction, t.value!) }));
    const state = readEngineState(study.id, study.method, rec);
    try {
      const { result } = await this.engine.run({ op: 'estimate', method: study.method, state, history });
      if (result.op !== 'estimate') return none;
      const { predicted, predicted_std } = result.estimate;
      return { predicted: predicted === null ? null : engineY(study.direction, predicted), predicted_std };
    } catch (err) {
      // A model that cannot predict (e.g. a degenerate fit) leaves the estimate empty rather than
      // failing a read-only report; anything else is a real fault.
      if (err instanceof EngineError) return none;
      throw err;
    }
  }

  private async study(tenantId: string, studyId: string): Promise<Study> {
    const study = await this.storage.getStudy(tenantId, studyId);
    if (!study) throw new StudyNotFoundError(studyId);
    return readStudy(study);
  }
}

/**
 * Running best and simple regret: regret = best_so_far − f* when minimising and f* − best_so_far
 * when maximising, so it is ≥ 0 whenever f* really is the optimum and falls to 0 on reaching it.
 */
export function regretHistory(completed: readonly TrialRecord[], direction: Direction, knownOptimum: number | null): Evaluation[] {
  let best = engineY(direction, Infinity);
  return completed.map((t, i) => {
    const v = t.value!;
    if (isBetter(direction, v, best)) best = v;
    return { index: i + 1, trialId: t.trialId, value: v, bestSoFar: best, regret: knownOptimum === null ? null : engineY(direction, best - knownOptimum) };
  });
}

function spaceOf(study: Study): SearchSpace {
  return searchSpace(study.parameters, study.prior);
}

const mapNull = (v: number | null, f: (x: number) => number) => (v === null ? null : f(v));

function finiteOrNull(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}
