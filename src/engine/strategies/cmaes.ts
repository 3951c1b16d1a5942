/**
 * CSA CMA-ES with active (negative) weights, exactly as N. Hansen, "The CMA Evolution Strategy:
 * A Tutorial", arXiv:1604.00772 (v2), Appendix A. Equation numbers "(n)" below are the tutorial's.
 *
 * Glossary (tutorial symbols → code): n = d = `dim`; λ = population (the told batch size); μ = λ/2
 * parents; w_i recombination weights, best first; m = `mean` (d); σ = `sigma`; C (d×d, number[][]);
 * B, D the eigenvectors / sqrt-eigenvalues of C (C = B D² Bᵀ); p_σ, p_c the evolution paths (d);
 * y_k = (x_k − m)/σ ~ N(0, C). BaseState.cov is σ²C, the actual search covariance.
 *
 * Ask/tell semantics for a service (ARCHITECTURE.md rule 2): `ask` may be called several times per
 * generation and the domain may project points onto bounds before evaluating them, so `tell`
 * recomputes y_k from the points actually evaluated (ctx.batch). Points that are not bit-for-bit
 * one of this generation's asked points (projected or external) are treated as injected
 * solutions and their Mahalanobis length is clipped to √n + 2n/(n+2) (Hansen 2011, "Injecting
 * external solutions into CMA-ES", arXiv:1110.4181), which keeps a far projection from blowing up
 * σ or C; genuine samples are used unchanged, as in the tutorial. The population size used in the
 * update is the size of the told batch: all parameters of Table 1 are recomputed for it, so a
 * batch of size ≠ λ (a partial or an enlarged generation) is a well-formed (μ/μ_w, λ')-update. A
 * batch of one point carries no ranking information: the distribution is kept, only the
 * generation counter advances.
 */
import { Rng } from '../random/index.js';
import type { AskContext, AskResult, InitSpec, StrategyDescriptor, TellContext } from './types.js';
import { checkedOptions } from './options.js';
import { NO_DIAGNOSTICS, checkBatch, checkCount, migrateOptionsState, orderBestFirst } from './es-utils.js';
import { askCatCma, initCatCma, tellCatCma } from './catcma.js';
import { CMA_MIN_BATCH, CMA_OPTIONS, cmaParams, cmaSample, cmaStart, cmaUpdate, type CmaesState } from './cma-core.js';

// The core lives in cma-core.ts (shared with CatCMA and lq-CMA-ES); CMA-ES's own names stay importable from here.
export {
  CMA_OPTIONS, cmaParameters, cmaParams, cmaSample, cmaStart, cmaUpdate,
  type AsngState, type CmaCore, type CmaParameters, type CmaParams, type CmaStep, type CmaesState,
} from './cma-core.js';

/** Version 2: `params` instead of the options (version 1 is read by `migrate`). */
export const CMAES_STATE_VERSION = 2;

function init(spec: InitSpec, rng: Rng): CmaesState {
  const params = cmaParams(checkedOptions('cmaes', CMA_OPTIONS, spec.options));
  const base = {
    version: CMAES_STATE_VERSION, method: 'cmaes' as const, dim: spec.dim, batchSize: spec.batchSize, generation: 0,
    rng: rng.state(), params, diagnostics: { ...NO_DIAGNOSTICS },
  };
  // Categorical parameters: CatCMA (catcma.ts, ALGORITHM.md §27).
  if (spec.categories?.length) return initCatCma(spec, params, base);
  const start = cmaStart(spec, 'cmaes', params);
  return { ...base, ...start, asked: [] };
}

function ask(state: CmaesState, ctx: AskContext, count: number): AskResult<CmaesState> {
  if (state.categorical) return askCatCma(state, ctx, count);
  checkCount(count, 'cmaes');
  const rng = Rng.fromState(state.rng);
  const points = cmaSample(state, rng, count);
  // `asked` keeps its own copies: callers may project the returned points in place.
  return { points, state: { ...state, rng: rng.state(), asked: [...state.asked, ...points.map((p) => p.slice())] } };
}

function tell(state: CmaesState, ctx: TellContext): CmaesState {
  if (state.categorical) return tellCatCma(state, ctx);
  checkBatch(ctx.batch, state.dim, 'cmaes');
  const base = { ...state, generation: state.generation + 1, asked: [] as number[][] };
  if (ctx.batch.length < 2) return base; // one point cannot be ranked: nothing to learn
  const asked = new Set(state.asked.map((a) => a.join(',')));
  const ranked = orderBestFirst(ctx.batch).map((idx) => ctx.batch[idx].x);
  return { ...base, ...cmaUpdate(state, ranked, ranked.map((x) => !asked.has(x.join(','))), state.generation) };
}

export const cmaes: StrategyDescriptor<CmaesState> = {
  name: 'cmaes',
  options: CMA_OPTIONS,
  defaults: () => ({ sigma0: 1, active: true }),
  minBatch: CMA_MIN_BATCH,
  usesBox: false,
  categorical: true,
  stateVersion: CMAES_STATE_VERSION,
  migrate: (stored) => migrateOptionsState<CmaesState>('cmaes', CMAES_STATE_VERSION, stored, cmaParams),
  init,
  ask,
  tell,
};
