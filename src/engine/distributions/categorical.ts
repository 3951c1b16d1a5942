/**
 * Categorical search distributions over the choices of categorical parameters: sampling, the
 * natural-gradient (IGO) update and the margin of CatCMA (Hamano, Saito, Nomura, Shirakawa,
 * "CatCMA: Stochastic Optimization for Mixed-Category Problems", GECCO 2024), ALGORITHM.md §27.
 *
 * Glossary: one categorical parameter has K choices; q (K) its probabilities, Σ q_k = 1. A point's
 * categorical coordinate holds the chosen index c ∈ {0 … K−1}, its one-hot encoding is e_c.
 * Several parameters: q is number[][] (one row per parameter, K_j each).
 *
 * Natural gradient. Parameterise q by θ = its first K−1 entries (the last is 1 − Σ θ). Then
 * ∇_θ ln q(c) = e_c/q_c − e_K/q_K (restricted to θ), the Fisher information is
 * F = diag(1/θ) + 11ᵀ/q_K, and its inverse F⁻¹ = diag(θ) − θθᵀ turns E[f(c) ∇_θ ln q(c)] into
 * E[f (e_c − q)] (restricted to θ; the K-th entry follows from Σ = 0): the IGO update of a
 * categorical distribution (Ollivier et al., JMLR 2017, §5.3; CatCMA eq. (9)):
 *
 *   q ← q + η Σ_i w_i (e_{c_i} − q)         with Σ_i w_i the weights of the generation's points.
 *
 * With Σ w_i = 1 and w ≥ 0 the update stays on the simplex for η ≤ 1; ProbNES's BQ weights can
 * be negative, so the result is clipped to the margin below and renormalised.
 *
 * Margin (CatCMA §4.2): every probability is kept ≥ q_min = α/(K−1) with α = 1 − 0.73^{1/N_cat},
 * N_cat the number of categorical parameters (the reference implementation, CyberAgentAILab/cmaes
 * `CatCMA`, uses these values); so a choice that looks bad early keeps a chance of being sampled
 * again: with one parameter, the K−1 other choices keep ≥ 27% of the mass together. After the
 * update, entries below q_min are raised to it and the excess is taken from the entries above it,
 * in proportion to their distance to q_min (which keeps them ≥ q_min):
 *   q ← max(q, q_min);  q ← q − (Σq − 1)(q − q_min)/(Σq − K q_min);  q ← q/Σq.
 */
import type { Rng } from '../random/index.js';

/**
 * The layout of a mixed point or state: d_c = dim − m continuous coordinates first, then one choice
 * per categorical parameter, K_j choices each (the row lengths of `categorical`, none when absent).
 */
export function mixedLayout(state: { dim: number; categorical?: readonly (readonly number[])[] }): { dc: number; K: number[] } {
  const K = (state.categorical ?? []).map((q) => q.length);
  return { dc: state.dim - K.length, K };
}

/** Index drawn from q by inversion of one uniform (the last index absorbs rounding in Σ q). */
export function sampleChoice(rng: Rng, q: readonly number[]): number {
  const u = rng.uniform();
  let acc = 0;
  for (let k = 0; k < q.length - 1; k++) {
    acc += q[k]!;
    if (u < acc) return k;
  }
  return q.length - 1;
}

/** One index per categorical parameter, drawn independently. */
export function sampleChoices(rng: Rng, q: readonly (readonly number[])[]): number[] {
  return q.map((row) => sampleChoice(rng, row));
}

/** The most probable index (the first one on ties): the categorical analogue of the mean. */
export function modeOf(q: readonly number[]): number {
  let b = 0;
  for (let k = 1; k < q.length; k++) if (q[k]! > q[b]!) b = k;
  return b;
}

/** CatCMA's α for N_cat categorical parameters: 1 − 0.73^{1/N_cat} (header). */
export function marginAlpha(nCat: number): number {
  return 1 - Math.pow(0.73, 1 / Math.max(1, nCat));
}

/** q_min = α/(K − 1): the floor on each of K probabilities (0 when K = 1, whose q is [1]). */
export function marginFloor(K: number, nCat: number): number {
  return K <= 1 ? 0 : marginAlpha(nCat) / (K - 1);
}

/**
 * The margin correction of the header: q projected to {q ≥ floor, Σ q = 1}. A q that is not
 * finite (it never should be) or leaves no mass above the floor falls back to uniform.
 */
export function applyMargin(q: readonly number[], floor: number): number[] {
  const K = q.length;
  const uniform = () => q.map(() => 1 / K);
  if (!q.every(Number.isFinite) || floor * K >= 1) return uniform();
  const raised = q.map((v) => Math.max(v, floor));
  const sum = raised.reduce((a, b) => a + b, 0);
  const spare = sum - K * floor;
  if (!(spare > 0)) return uniform();
  const moved = raised.map((v) => v - ((sum - 1) * (v - floor)) / spare);
  const total = moved.reduce((a, b) => a + b, 0);
  return moved.map((v) => v / total);
}

/**
 * The IGO step of the header for one parameter: q + η Σ_i w_i (e_{c_i} − q), then the margin.
 * `choices` c_i and `weights` w_i are the generation's points, in the same order.
 */
export function naturalGradientStep(q: readonly number[], choices: readonly number[], weights: readonly number[], eta: number, floor: number): number[] {
  const g = naturalGradient(q, choices, weights);
  return applyMargin(q.map((v, k) => v + eta * g[k]!), floor);
}

/** Σ_i w_i (e_{c_i} − q): the natural gradient of E_q[f] estimated from weighted samples (header). */
export function naturalGradient(q: readonly number[], choices: readonly number[], weights: readonly number[]): number[] {
  const g = new Array<number>(q.length).fill(0);
  let wSum = 0;
  choices.forEach((c, i) => {
    g[c]! += weights[i]!;
    wSum += weights[i]!;
  });
  return g.map((v, k) => v - wSum * q[k]!);
}
