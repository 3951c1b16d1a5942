/**
 * Parameter transforms: user units ⇄ the whitened internal space of ALGORITHM.md §0.
 *
 *   t = T(x)            per parameter: identity, or ln for `scale: "log"`
 *   u = L0⁻¹ (t − m0)   where N(m0, L0 L0ᵀ) is the effective prior in transformed scale
 *
 * so the prior is N(0, I) internally and the engine's unit-scale GP priors make sense for any units.
 * Going back, a point is rounded (int parameters, in user units) and projected onto the bounds
 * before it is handed out, and `toInternal` of the handed-out value is what the engine learns from
 * (`materialize` returns both), so the model never sees a point that was not evaluated.
 */
import { fromRows, matVec, solveLower, tryCholesky, type Mat } from '../../engine/index.js';
import type { EffectivePrior, ParameterSpec } from './study-spec.js';

export interface SearchSpace {
  parameters: readonly ParameterSpec[];
  m0: number[];
  L0: Mat;
  /** Whether L0 is diagonal (then the bounds are a box in internal coordinates too). */
  diagonal: boolean;
}

export function searchSpace(parameters: readonly ParameterSpec[], prior: EffectivePrior): SearchSpace {
  const L0 = tryCholesky(fromRows(prior.covariance));
  if (!L0) throw new RangeError('prior covariance is not positive definite');
  const d = parameters.length;
  let diagonal = true;
  for (let i = 0; i < d; i++) for (let j = 0; j < i; j++) if (L0.data[i * d + j] !== 0) diagonal = false;
  return { parameters, m0: [...prior.mean], L0, diagonal };
}

const T = (p: ParameterSpec, x: number) => (p.scale === 'log' ? Math.log(x) : x);
const Tinv = (p: ParameterSpec, t: number) => (p.scale === 'log' ? Math.exp(t) : t);

/** User units → internal coordinates (no rounding or projection). */
export function toInternal(space: SearchSpace, x: readonly number[]): number[] {
  const r = space.parameters.map((p, i) => T(p, x[i]!) - space.m0[i]!);
  return Array.from(solveLower(space.L0, r));
}

/** Internal coordinates → user units, without rounding or projection. */
export function toUserRaw(space: SearchSpace, u: readonly number[]): number[] {
  const t = matVec(space.L0, u);
  return space.parameters.map((p, i) => Tinv(p, t[i]! + space.m0[i]!));
}

/** Projects onto the bounds and rounds int parameters, in user units (the value handed out). */
export function legalize(space: SearchSpace, x: readonly number[]): number[] {
  return space.parameters.map((p, i) => {
    let v = x[i]!;
    if (!Number.isFinite(v)) v = v > 0 ? Number.MAX_VALUE : p.scale === 'log' ? Number.MIN_VALUE : -Number.MAX_VALUE;
    if (p.bounds) v = Math.min(Math.max(v, p.bounds[0]), p.bounds[1]);
    if (p.type === 'int') {
      v = Math.round(v);
      // Rounding can step outside the bounds only if they are not integers; int bounds are enforced
      // at creation, so this is a guard for log-scaled ints near a tiny lower bound.
      if (p.bounds) v = Math.min(Math.max(v, Math.ceil(p.bounds[0])), Math.floor(p.bounds[1]));
      if (p.scale === 'log' && v < 1) v = 1;
    }
    return v;
  });
}

export interface Materialized {
  /** What the client evaluates, keyed by parameter name, in user units. */
  parameters: Record<string, number>;
  /** The internal coordinates of exactly that point (what the engine learns from). */
  point: number[];
}

/** Internal point → the legal user-unit point handed out, and its internal coordinates. */
export function materialize(space: SearchSpace, u: readonly number[]): Materialized {
  const x = legalize(space, toUserRaw(space, u));
  const parameters: Record<string, number> = {};
  space.parameters.forEach((p, i) => (parameters[p.name] = x[i]!));
  return { parameters, point: toInternal(space, x) };
}

/** The search box in internal coordinates for BO/πBO (ALGORITHM.md §6), or null. */
export function internalBox(space: SearchSpace, boxStd: number): { lower: number[]; upper: number[] } | null {
  const d = space.parameters.length;
  if (!space.diagonal) return null; // the strategy then uses prior mean ± box_std·std; points are projected
  const lower: number[] = [];
  const upper: number[] = [];
  space.parameters.forEach((p, i) => {
    const s = space.L0.data[i * d + i]!;
    if (p.bounds) {
      lower.push((T(p, p.bounds[0]) - space.m0[i]!) / s);
      upper.push((T(p, p.bounds[1]) - space.m0[i]!) / s);
    } else {
      lower.push(-boxStd);
      upper.push(boxStd);
    }
  });
  return { lower, upper };
}

/** Parameters given by name (an external observation) → user-unit vector in parameter order. */
export function vectorFromNamed(space: SearchSpace, named: Record<string, number>): number[] {
  return space.parameters.map((p) => named[p.name]!);
}
