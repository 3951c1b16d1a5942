/**
 * CatCMA (Hamano, Saito, Nomura, Shirakawa, "CatCMA: Stochastic Optimization for Mixed-Category
 * Problems", GECCO 2024; ALGORITHM.md §27): `cmaes` on a space with categorical parameters
 * (InitSpec.categories). The search distribution is N(m, σ²C) over the d_c continuous coordinates
 * times one categorical distribution q_j per categorical parameter; a point is [x, c].
 *
 * - Continuous part: cmaes.ts's update (cmaUpdate) on the continuous coordinates, ranked by the
 *   whole point's value, with the study's `active` option (CatCMA's own continuous update uses the
 *   non-negative weights only: `active: false` reproduces it).
 * - Categorical part, as the reference implementation (CyberAgentAILab/cmaes `CatCMA`): the
 *   natural gradient ĝ_j = Σ_i w_i (e_{c_i,j} − q_j) with CatCMA's weights (w'_i = ln((λ+1)/2) − ln i
 *   for the best μ = ⌊λ/2⌋, normalised to sum 1; zero for the others), a step ε = δ/‖ĝ‖_F in the
 *   Fisher metric (‖ĝ‖_F computed through the square root of the Fisher information, Akimoto et al.,
 *   ICML 2019, Appendix B), the step size δ = δ_init/Δ adapted by ASNG (same paper: α = 1.5,
 *   δ_init = 1, β = δ/√(Σ_j (K_j − 1))), and the margin of distributions/categorical.ts
 *   (q_min = (1 − 0.73^{1/N_cat})/(K − 1)).
 * - Without continuous coordinates only the categorical part runs.
 *
 * State: cmaes.ts's, with mean/C/paths over the continuous coordinates (`dim` counts all of them),
 * plus `categorical` (q_j) and `asng` (Δ, γ, s). A state without `categorical` is an ordinary CMA-ES
 * state: cmaes.ts dispatches here only when it has one, so numeric studies are unchanged.
 */
import { InvalidInputError, NonFiniteError } from '../errors.js';
import { Rng } from '../random/index.js';
import { applyMargin, marginFloor, mixedLayout, sampleChoices } from '../distributions/categorical.js';
import type { AskContext, AskResult, InitSpec, TellContext } from './types.js';
import { checkBatch, checkCount, orderBestFirst } from './es-utils.js';
import { cmaSample, cmaStart, cmaUpdate, type AsngState, type CmaCore, type CmaesState, type CmaParams } from './cma-core.js';

export type { AsngState } from './cma-core.js';

const ASNG_ALPHA = 1.5;
const DELTA_INIT = 1;

/** The number of free categorical parameters θ, Σ_j (K_j − 1), given the K_j. */
const thetaCount = (K: readonly number[]) => K.reduce((a, k) => a + k - 1, 0);

/** ASNG's state before any update: Δ = 1, γ = 0, s = 0. */
const freshAsng = (nTheta: number): AsngState => ({ Delta: 1, gamma: 0, s: new Array<number>(nTheta).fill(0) });

/** The categorical part of a state: q_j per categorical parameter and ASNG's state. */
export interface CategoricalPart {
  categorical: number[][];
  asng: AsngState;
}

/** The categorical part's start: each prior q_j with the margin applied, ASNG before any update. */
export function startCategorical(prior: readonly (readonly number[])[]): CategoricalPart {
  return {
    categorical: prior.map((p) => applyMargin(p, marginFloor(p.length, prior.length))),
    asng: freshAsng(thetaCount(prior.map((p) => p.length))),
  };
}

/**
 * CMA-ES's start over the d_c continuous coordinates of a mixed InitSpec (none: only σ₀), checked:
 * CatCMA's and lq-CMA-ES's with categorical parameters (`method` names it in the errors).
 */
export function continuousStart(spec: InitSpec, method: string, params: CmaParams): ReturnType<typeof cmaStart> {
  const q = spec.categories ?? [];
  const dc = spec.dim - q.length;
  if (q.length === 0 || !(Number.isInteger(dc) && dc >= 0)) throw new InvalidInputError(`${method}: a mixed space needs categories and dim ≥ their number`);
  if (!Number.isInteger(spec.batchSize) || spec.batchSize < 2) throw new InvalidInputError(`${method}: batch size must be an integer ≥ 2, got ${spec.batchSize}`);
  // Stryker disable next-line StringLiteral: the method name appears only in cmaStart's sigma0 message, which the options' own check (≤ 1000) always pre-empts
  return dc > 0 ? cmaStart({ ...spec, dim: dc }, method, params) : { mean: [], cov: [], sigma: params.sigma0, C: [], p_sigma: [], p_c: [] };
}

/** CatCMA's state for a mixed InitSpec (its `params` and version are cmaes.ts's). */
export function initCatCma(spec: InitSpec, params: CmaParams, base: Omit<CmaesState, 'mean' | 'cov' | 'sigma' | 'C' | 'p_sigma' | 'p_c' | 'asked'>): CmaesState {
  const start = continuousStart(spec, 'cmaes', params);
  return { ...base, ...start, asked: [], ...startCategorical(spec.categories!) } as CmaesState;
}

/** `count` points [x, c] of N(m, σ²C) over the continuous coordinates times each q_j. */
export function sampleMixed(state: CmaCore & { categorical?: number[][] }, rng: Rng, count: number): number[][] {
  const { dc } = mixedLayout(state);
  const cont = dc > 0 ? cmaSample({ ...state, dim: dc }, rng, count) : Array.from({ length: count }, () => [] as number[]);
  return cont.map((x) => [...x, ...sampleChoices(rng, state.categorical!)]);
}

export function askCatCma(state: CmaesState, _ctx: AskContext, count: number): AskResult<CmaesState> {
  checkCount(count, 'cmaes');
  const { dc } = mixedLayout(state);
  const rng = Rng.fromState(state.rng);
  const points = sampleMixed(state, rng, count);
  return { points, state: { ...state, rng: rng.state(), asked: [...state.asked, ...points.map((p) => p.slice(0, dc))] } };
}

/** CatCMA's categorical weights for λ ranked points: the best ⌊λ/2⌋ positive (summing to 1), the rest 0. */
export function catWeights(lambda: number): number[] {
  const mu = Math.floor(lambda / 2);
  const w = Array.from({ length: lambda }, (_, i) => (i < mu ? Math.log((lambda + 1) / 2) - Math.log(i + 1) : 0));
  const sum = w.reduce((a, b) => a + b, 0);
  return w.map((v) => v / sum);
}

/**
 * The categorical update of the header for choices ranked best first: natural gradient, Fisher-norm
 * step ε = δ/‖ĝ‖_F, ASNG adaptation of Δ, margin. Returns the new q and ASNG state.
 */
export function catUpdate(q: readonly (readonly number[])[], asng: AsngState, rankedChoices: readonly number[][]): { q: number[][]; asng: AsngState } {
  const w = catWeights(rankedChoices.length);
  const ngrad = q.map((qj, j) => {
    const g = qj.map(() => 0);
    rankedChoices.forEach((c, i) => (g[c[j]!]! += w[i]!));
    const wSum = w.reduce((a, b) => a + b, 0);
    return g.map((v, a) => v - wSum * qj[a]!);
  });
  // √F ĝ in the first K − 1 coordinates of each parameter (Akimoto et al. 2019, Appendix B).
  const sqF: number[] = [];
  q.forEach((qj, j) => {
    const K = qj.length, qK = qj[K - 1]!;
    let head = 0;
    for (let a = 0; a < K - 1; a++) head += ngrad[j]![a]!;
    for (let a = 0; a < K - 1; a++) sqF.push(ngrad[j]![a]! / Math.sqrt(qj[a]!) + (Math.sqrt(qj[a]!) * head) / (qK + Math.sqrt(qK)));
  });
  const nTheta = sqF.length;
  // No free probability (every parameter has one choice): nothing to learn, and s has no entries.
  if (nTheta === 0) return { q: q.map((r) => [...r]), asng: { ...asng, s: [] } };
  const sqNorm = sqF.reduce((a, v) => a + v * v, 0);
  // Stryker disable next-line ArithmeticOperator: ±1e-30 only keeps 0/0 away when ĝ = 0, where the step εĝ and the s update are 0 either way
  const pnorm = Math.sqrt(sqNorm) + 1e-30;
  const delta = DELTA_INIT / asng.Delta;
  const eps = delta / pnorm;
  const floors = q.map((qj) => marginFloor(qj.length, q.length));
  const next = q.map((qj, j) => applyMargin(qj.map((v, a) => v + eps * ngrad[j]![a]!), floors[j]!));
  // ASNG: β = δ/√(#θ); s and γ accumulate the normalised gradient; Δ grows while it is consistent.
  const beta = delta / Math.sqrt(nTheta);
  const s = asng.s.map((v, i) => (1 - beta) * v + (Math.sqrt(beta * (2 - beta)) * sqF[i]!) / pnorm);
  const gamma = (1 - beta) ** 2 * asng.gamma + beta * (2 - beta);
  const sNorm2 = s.reduce((a, v) => a + v * v, 0);
  const Delta = asng.Delta * Math.exp(beta * (gamma - sNorm2 / ASNG_ALPHA));
  // applyMargin's q is always finite (uniform when given a non-finite one): only Δ can fail.
  if (!Number.isFinite(Delta)) throw new NonFiniteError('cmaes: categorical update became non-finite');
  return { q: next, asng: { Delta, gamma, s } };
}

/**
 * The categorical update from a generation's choices ranked best first (at least two: one point
 * carries no ranking). A state whose ASNG state is missing or of another size (an imported one)
 * starts ASNG afresh.
 */
export function updateCategorical(state: { categorical?: number[][]; asng?: AsngState }, rankedChoices: readonly number[][]): CategoricalPart {
  const q = state.categorical!;
  const nTheta = thetaCount(q.map((row) => row.length));
  const asng = state.asng && state.asng.s.length === nTheta ? state.asng : freshAsng(nTheta);
  const next = catUpdate(q, asng, rankedChoices.map((c) => c.map((v) => Math.round(v))));
  return { categorical: next.q, asng: next.asng };
}

export function tellCatCma(state: CmaesState, ctx: TellContext): CmaesState {
  checkBatch(ctx.batch, state.dim, 'cmaes');
  const { dc } = mixedLayout(state);
  const base = { ...state, generation: state.generation + 1, asked: [] as number[][] };
  if (ctx.batch.length < 2) return base; // one point cannot be ranked: nothing to learn
  const order = orderBestFirst(ctx.batch);
  const ranked = order.map((i) => ctx.batch[i]!.x);
  let cont = {};
  if (dc > 0) {
    const asked = new Set(state.asked.map((a) => a.join(',')));
    const xs = ranked.map((x) => x.slice(0, dc));
    cont = cmaUpdate({ ...state, dim: dc }, xs, xs.map((x) => !asked.has(x.join(','))), state.generation);
  }
  return { ...base, ...cont, ...updateCategorical(state, ranked.map((x) => x.slice(dc))) };
}
