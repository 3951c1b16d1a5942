/**
 * The probability that a point is feasible, for the batch (ALGORITHM.md §32.3 "The batch", §32.4 "as a
 * constraint"): one GP per constraint c_k on the internal points u, and, when an evaluation was
 * impossible, one GP on the labels +1 (infeasible) / −1 (evaluated), least-squares classification
 * (Rasmussen & Williams 2006, sec. 6.5). Under independent GPs
 *
 *   PF(u) = Π_k Φ(−m_k(u)/s_k(u))   (Gardner et al. 2014; Gelbart, Snoek & Adams 2014),
 *
 * m_k and s_k the latent posterior mean and standard deviation of channel k in its own units (c_k ≤ 0
 * is feasible, and so is a label ≤ 0). The batch keeps the candidates from ν with PF ≥ PF_MIN.
 *
 * Glossary: d the dimension; an evaluation is an observation with x = u (d), and either c (K values)
 * or `infeasible`; a channel is one constraint or the infeasibility labels. Choices, and why:
 * - The fit set: the FEASIBILITY_POINTS evaluations nearest the asking distribution's mean (squared
 *   Mahalanobis distance under its Σ, ties by order; every evaluation when there are fewer), the
 *   points where its candidates fall. It bounds the cost of a fit at O(200³) however long the study.
 * - Each channel's values are standardised over the fit set (probnes-data.ts `standardise`) and fitted
 *   by the ProbNES GP (gp/fit.ts, the priors of §2, its default start only: no generator is drawn
 *   from unless every start fails, and then from the fit's own fixed seed), so the model is a
 *   function of its inputs alone.
 * - A channel with no violation in the fit set has PF = 1 (no GP: a GP on values that are all ≤ 0
 *   would only lower PF by its prior spread far from the data); a constant channel that is violated
 *   everywhere has PF = 0 (every candidate is then inadmissible, and the batch keeps them all).
 */
import { normCdf } from '../acquisition/normal.js';
import { fitGp, predict, probnesPriors, type GpModel } from '../gp/index.js';
import { cholesky, fromRows } from '../linalg/index.js';
import { mahalanobisSqPacked, nearestIndices, standardise } from './probnes-data.js';

/** The fewest PF a candidate from ν needs to join the batch (§32.3). */
export const PF_MIN = 0.05;
/** The most evaluations a feasibility model is fitted on. */
export const FEASIBILITY_POINTS = 200;

/** What the model reads of an observation (strategies/types.ts Observation has these fields). */
export interface FeasibilityEvaluation {
  x: number[];
  c?: number[];
  infeasible?: true;
}

/** One channel: a GP on standardised values (value = mean + std·GP), or PF fixed at 0. */
type Channel = { model: GpModel; mean: number; std: number } | { pf: 0 };

export interface FeasibilityModel {
  /** The channels fitted by a GP (a constant channel and one without violation have none). */
  readonly fitted: number;
  /** PF(u) at an internal point. */
  pf(u: readonly number[]): number;
}

/** Φ(−m/s) of one channel at u, in its own units. */
function channelPf(ch: Channel, u: readonly number[]): number {
  if ('pf' in ch) return ch.pf;
  const p = predict(ch.model, [u as number[]]);
  const m = ch.mean + ch.std * p.mean[0];
  const s = ch.std * Math.sqrt(p.variance[0]);
  if (!(s > 0)) return m < 0 ? 1 : m > 0 ? 0 : 0.5;
  return normCdf(-m / s);
}

/** A channel over its values at the points X (one row each), or null when none is violated. */
function channel(X: number[][], values: number[]): Channel | null {
  if (!values.some((v) => v > 0)) return null;
  if (values.every((v) => v === values[0])) return { pf: 0 };
  const st = standardise(values);
  const d = X[0].length;
  const fit = fitGp(X, st.yTilde, { priors: probnesPriors(d), restarts: 0 });
  return { model: fit.model, mean: st.yMean, std: st.yStd };
}

/** (u_j − μ)ᵀ Σ⁻¹ (u_j − μ) of every evaluation (the active set's distance, probnes-data.ts). */
function distances(evaluations: readonly FeasibilityEvaluation[], mean: number[], cov: number[][]): Float64Array {
  const d = mean.length;
  const xs = new Float64Array(evaluations.length * d);
  evaluations.forEach((o, j) => xs.set(o.x, j * d));
  return mahalanobisSqPacked(cholesky(fromRows(cov)).L, xs, evaluations.length, mean);
}

/**
 * The feasibility model of `constraints` constraints over the evaluations, fitted on those nearest
 * `mean` under `cov` (the asking distribution ν).
 */
export function feasibilityModel(evaluations: readonly FeasibilityEvaluation[], constraints: number, mean: number[], cov: number[][], maxPoints = FEASIBILITY_POINTS): FeasibilityModel {
  const usable = evaluations.filter((o) => o.x.length === mean.length && o.x.every(Number.isFinite));
  const near = usable.length > maxPoints ? nearestIndices(distances(usable, mean, cov), maxPoints).map((j) => usable[j]) : usable;
  const channels: Channel[] = [];
  const add = (points: readonly FeasibilityEvaluation[], value: (o: FeasibilityEvaluation) => number) => {
    if (points.length === 0) return;
    const ch = channel(points.map((o) => o.x), points.map(value));
    if (ch) channels.push(ch);
  };
  for (let k = 0; k < constraints; k++) {
    add(near.filter((o) => !o.infeasible && Number.isFinite(o.c?.[k])), (o) => o.c![k]);
  }
  // §32.4: an impossible evaluation is a violated constraint for the batch, labelled +1 against −1.
  add(near, (o) => (o.infeasible ? 1 : -1));
  return {
    fitted: channels.filter((ch) => !('pf' in ch)).length,
    pf(u) {
      let p = 1;
      for (const ch of channels) p *= channelPf(ch, u);
      return p;
    },
  };
}
