/**
 * The study the read and size benchmarks measure (bench:reads, bench:intermediate, bench:study-size):
 * one study over x0, x1 ∈ [−5, 5] with the prior N(0, 2.5²) per parameter, written through the
 * storage's import with the trials (and intermediate values) a benchmark builds, and one engine-state
 * snapshot per generation of `batch`, the latest with no trial yet: what the server reads back is a
 * study it could have run itself, so its reads and suggestions take their real paths.
 *
 * CMA-ES by default, whose every snapshot is its initial state (only the generation differs). With
 * another `method` (prob-cmaes), the latest snapshot is the state after `warmupGenerations` real
 * updates on the first results (a ProbNES state past its start phase, with a fitted model), so the
 * next request updates from a state like the ones a running study has; the earlier snapshots, which
 * nothing reads in the loop, are the initial state.
 */
import { importedEvaluations } from '../../src/domain/results/index.js';
import { runEngineTask } from '../../src/domain/pool/engine-tasks.js';
import { resolveOptions, type BaseState, type MethodName, type Observation } from '../../src/engine/index.js';
import type { ImportedEngineState, ImportedStudy, ImportedTrial, IntermediateRecord, JsonValue, Storage } from '../../src/storage/index.js';

export interface BigStudy {
  id: string;
  name: string;
  /** Points per generation (CMA-ES's λ): one snapshot per `batch` trials. */
  batch: number;
  trials: ImportedTrial[];
  /** The benchmark's clock: the study is created at at(0), generation g's snapshot at at(g · batch). */
  at: (k: number) => string;
  updatedAt: string;
  knownOptimum?: number | null;
  loopSettings?: ImportedStudy['loopSettings'];
  intermediate?: IntermediateRecord[];
  /** 'cmaes' by default. */
  method?: MethodName;
  /** Updates made on the first results for the latest snapshot (other methods than cmaes; default 20). */
  warmupGenerations?: number;
}

/** The state after `generations` updates on the first results of `trials`, in generations of `batch`. */
function warmedState(method: MethodName, init: BaseState, trials: readonly ImportedTrial[], batch: number, generations: number): BaseState {
  let state = init;
  const history: Observation[] = [];
  for (let g = 0; g < generations && (g + 1) * batch <= trials.length; g++) {
    const told = trials.slice(g * batch, (g + 1) * batch).map((t) => ({ x: t.point!, y: t.value! }));
    history.push(...told);
    const r = runEngineTask({ op: 'tell', method, state, ctx: { batch: told, history: history.slice() } });
    if (r.op !== 'tell') throw new Error(`engine answered ${r.op} to tell`);
    state = r.state;
  }
  return state;
}

export async function importBigStudy(storage: Storage, s: BigStudy): Promise<void> {
  const method = s.method ?? 'cmaes';
  const options = resolveOptions(method, 2);
  const init = runEngineTask({ op: 'init', method, seed: 1, spec: { dim: 2, batchSize: s.batch, options, box: null } });
  if (init.op !== 'init') throw new Error(`engine answered ${init.op} to init`);
  const generations = Math.ceil(s.trials.length / s.batch);
  const latest = method === 'cmaes' ? init.state : warmedState(method, init.state, s.trials, s.batch, s.warmupGenerations ?? 20);
  const states: ImportedEngineState[] = Array.from({ length: generations + 1 }, (_, g) => ({
    generation: g,
    revision: g + 1,
    version: init.state.version,
    state: { ...(g === generations ? latest : init.state), generation: g } as unknown as JsonValue,
    createdAt: s.at(g * s.batch),
  }));
  const parameters = [0, 1].map((i) => ({ name: `x${i}`, type: 'float' as const, scale: 'linear' as const, bounds: [-5, 5] as [number, number], prior: { mean: 0, std: 2.5 } }));
  const study: ImportedStudy = {
    id: s.id, tenantId: 'default', name: s.name, direction: 'minimize', parameters, prior: { mean: [0, 0], covariance: [[6.25, 0], [0, 6.25]], std: [2.5, 2.5] },
    method, batchSize: s.batch, options, seed: 1, maxTrials: null, leaseSeconds: 600, knownOptimum: s.knownOptimum ?? null, metadata: {}, state: 'ACTIVE', reason: null,
    createdAt: s.at(0), generation: generations, updatedAt: s.updatedAt, ...(s.loopSettings ? { loopSettings: s.loopSettings } : {}),
  };
  await storage.importStudy(study, s.trials, states, s.intermediate ?? [], importedEvaluations(study, s.trials));
}
