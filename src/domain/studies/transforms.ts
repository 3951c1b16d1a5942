/**
 * Parameter transforms: user units ⇄ the whitened internal space of ALGORITHM.md §0.
 *
 *   t = T(x)            per parameter: identity, or ln for `scale: "log"`
 *   u = L0⁻¹ (t − m0)   where N(m0, L0 L0ᵀ) is the effective prior in transformed scale
 *
 * so the prior is N(0, I) internally and the engine's unit-scale GP priors make sense for any units.
 * Going back, a point is projected onto the bounds and rounded (int parameters to integers,
 * stepped ones to their grid low + k·step, grid.ts; in user units) before it is handed out, and `toInternal` of the handed-out value is what the engine learns from
 * (`materialize` returns both), so the model never sees a point that was not evaluated.
 *
 * Categorical parameters are not whitened: an internal point is [u, c], the whitened coordinates u of
 * the numeric parameters (in their order) followed by one choice index c_j ∈ {0 … K_j − 1} per
 * categorical parameter (in their order), which is how the engine reads points
 * (InitSpec.categories). User-unit vectors stay in the order of `parameters`, a categorical entry
 * holding the choice itself.
 *
 * Conditional parameters (docs/conditional.md, ALGORITHM.md §30): the engine keeps a coordinate for
 * every parameter whether active or not; `active` says which are for a point, a handed-out point's
 * `parameters` hold the active ones only, and a point given without its inactive values (an
 * external observation, an imported trial) gets a neutral value there (`complete`: the prior mean,
 * or the prior's most probable choice) for the engine, which the GP methods ignore by imputation.
 */
import { fromRows, matVec, modeOf, solveLower, tryCholesky, type Mat } from '../../engine/index.js';
import { isCategorical, isNumeric, type CategoricalParameterSpec, type EffectivePrior, type NumericParameterSpec, type ParameterSpec } from './study-spec.js';
import type { ParamValue } from './study-request.js';
import { gridOf, type Grid } from './grid.js';

export interface SearchSpace {
  parameters: readonly ParameterSpec[];
  /** The numeric parameters (the whitened coordinates, in this order) and their indices in `parameters`. */
  numeric: readonly NumericParameterSpec[];
  numericAt: readonly number[];
  /** The categorical parameters (the index coordinates after the numeric ones) and their indices in `parameters`. */
  categorical: readonly CategoricalParameterSpec[];
  categoricalAt: readonly number[];
  m0: number[];
  L0: Mat;
  /** Whether L0 is diagonal (then the bounds are a box in internal coordinates too). */
  diagonal: boolean;
  /** Per parameter (in the order of `parameters`), its grid when it is stepped (grid.ts's gridOf), else null. */
  grids: readonly (Grid | null)[];
  /**
   * Conditional parameters, parents before children (null when the study has none): each one's
   * index in `parameters`, its parent's, and the parent's choice indices under which it is active.
   */
  conditions: readonly ResolvedCondition[] | null;
}

export interface ResolvedCondition {
  at: number;
  parentAt: number;
  values: readonly number[];
}

export function searchSpace(parameters: readonly ParameterSpec[], prior: EffectivePrior): SearchSpace {
  const L0 = tryCholesky(fromRows(prior.covariance));
  if (!L0) throw new RangeError('prior covariance is not positive definite');
  const numericAt = parameters.flatMap((p, i) => (isNumeric(p) ? [i] : []));
  const categoricalAt = parameters.flatMap((p, i) => (isCategorical(p) ? [i] : []));
  const d = numericAt.length;
  let diagonal = true;
  for (let i = 0; i < d; i++) for (let j = 0; j < i; j++) if (L0.data[i * d + j] !== 0) diagonal = false;
  return {
    parameters,
    numeric: numericAt.map((i) => parameters[i] as NumericParameterSpec),
    numericAt,
    categorical: categoricalAt.map((i) => parameters[i] as CategoricalParameterSpec),
    categoricalAt,
    m0: [...prior.mean],
    L0,
    diagonal,
    grids: parameters.map((p) => (isNumeric(p) ? gridOf(p) : null)),
    conditions: resolveConditions(parameters),
  };
}

/** The conditions in evaluation order (parents first), or null; the study's checks ruled out cycles and bad values. */
function resolveConditions(parameters: readonly ParameterSpec[]): ResolvedCondition[] | null {
  if (!parameters.some((p) => p.condition)) return null;
  const byName = new Map(parameters.map((p, i) => [p.name, i] as const));
  const depth = (i: number): number => {
    const c = parameters[i]!.condition;
    return c ? 1 + depth(byName.get(c.parent)!) : 0;
  };
  return parameters
    .flatMap((p, i) => {
      if (!p.condition) return [];
      const parentAt = byName.get(p.condition.parent)!;
      const parent = parameters[parentAt] as CategoricalParameterSpec;
      return [{ at: i, parentAt, values: p.condition.values.map((v) => choiceIndex(parent, v)), depth: depth(i) }];
    })
    .sort((a, b) => a.depth - b.depth || a.at - b.at)
    .map(({ at, parentAt, values }) => ({ at, parentAt, values }));
}

/**
 * Which parameters are active for a point (user-unit values in the order of `parameters`; an
 * inactive parameter's value is not read, a missing one leaves its children inactive).
 */
export function activeParameters(space: SearchSpace, x: readonly (ParamValue | undefined)[]): boolean[] {
  const active = space.parameters.map(() => true);
  for (const c of space.conditions ?? []) {
    const v = x[c.parentAt];
    active[c.at] = active[c.parentAt]! && v !== undefined && c.values.includes(choiceIndex(space.parameters[c.parentAt] as CategoricalParameterSpec, v));
  }
  return active;
}

/** The neutral value of parameter i for the engine when it is inactive: its prior mean, or its prior's most probable choice. */
function neutralValue(space: SearchSpace, i: number): ParamValue {
  const p = space.parameters[i]!;
  if (isCategorical(p)) return p.choices[modeOf(p.prior.probabilities)]!;
  const k = space.numericAt.indexOf(i);
  return Tinv(p, space.m0[k]!);
}

/** A point with its inactive parameters' values (absent or not) replaced by their neutral values: a whole vector for toInternal. */
export function complete(space: SearchSpace, x: readonly (ParamValue | undefined)[]): ParamValue[] {
  if (!space.conditions) return x as ParamValue[];
  const active = activeParameters(space, x);
  return space.parameters.map((_, i) => (active[i] ? x[i]! : neutralValue(space, i)));
}

/** The named values of the active parameters only (all of them without conditions). */
export function activeNamed(space: SearchSpace, x: readonly ParamValue[]): Record<string, ParamValue> {
  const active = space.conditions ? activeParameters(space, x) : null;
  const out: Record<string, ParamValue> = {};
  space.parameters.forEach((p, i) => {
    if (!active || active[i]) out[p.name] = x[i]!;
  });
  return out;
}

/** The conditions in engine coordinates (InitSpec.conditions): numeric coordinates first, then one per categorical parameter. */
export function engineConditions(space: SearchSpace): { index: number; parent: number; values: number[] }[] {
  const d = space.numeric.length;
  const coordinate = (i: number) => (isCategorical(space.parameters[i]!) ? d + space.categoricalAt.indexOf(i) : space.numericAt.indexOf(i));
  return (space.conditions ?? []).map((c) => ({ index: coordinate(c.at), parent: coordinate(c.parentAt), values: [...c.values] }));
}

/** The prior probabilities of each categorical parameter's choices: the engine's InitSpec.categories. */
export function categoryPriors(space: SearchSpace): number[][] {
  return space.categorical.map((p) => [...p.prior.probabilities]);
}

const T = (p: NumericParameterSpec, x: number) => (p.scale === 'log' ? Math.log(x) : x);
const Tinv = (p: NumericParameterSpec, t: number) => (p.scale === 'log' ? Math.exp(t) : t);

/** The index of a choice (matched by value and JSON type), or −1. */
export function choiceIndex(p: CategoricalParameterSpec, v: ParamValue): number {
  return p.choices.findIndex((c) => c === v);
}

/** The choice an internal index coordinate stands for (rounded and clamped: the engine hands out indices). */
function choiceAt(p: CategoricalParameterSpec, c: number): ParamValue {
  const k = Number.isFinite(c) ? Math.min(Math.max(Math.round(c), 0), p.choices.length - 1) : 0;
  return p.choices[k]!;
}

/** User units → internal coordinates (no rounding or projection). Choices must be the parameter's own. */
export function toInternal(space: SearchSpace, x: readonly ParamValue[]): number[] {
  const r = space.numeric.map((p, i) => T(p, x[space.numericAt[i]!] as number) - space.m0[i]!);
  const u = Array.from(solveLower(space.L0, r));
  space.categorical.forEach((p, j) => {
    const k = choiceIndex(p, x[space.categoricalAt[j]!]!);
    if (k < 0) throw new RangeError(`${JSON.stringify(x[space.categoricalAt[j]!])} is not a choice of ${p.name}`);
    u.push(k);
  });
  return u;
}

/** Internal coordinates → user units, without rounding or projection (choice indices are rounded). */
export function toUserRaw(space: SearchSpace, u: readonly number[]): ParamValue[] {
  const d = space.numeric.length;
  const t = matVec(space.L0, u.slice(0, d));
  const x = new Array<ParamValue>(space.parameters.length);
  space.numeric.forEach((p, i) => (x[space.numericAt[i]!] = Tinv(p, t[i]! + space.m0[i]!)));
  space.categorical.forEach((p, j) => (x[space.categoricalAt[j]!] = choiceAt(p, u[d + j]!)));
  return x;
}

/**
 * Projects onto the bounds and rounds int parameters to integers and stepped ones to their grid,
 * in user units (the value handed out). This is the only place a point is put on its grid: the
 * engine searches continuous coordinates, and the repeat check compares these values.
 */
export function legalize(space: SearchSpace, x: readonly ParamValue[]): ParamValue[] {
  return space.parameters.map((p, i) => {
    if (isCategorical(p)) return x[i]!;
    let v = x[i] as number;
    if (!Number.isFinite(v)) v = v > 0 ? Number.MAX_VALUE : p.scale === 'log' ? Number.MIN_VALUE : -Number.MAX_VALUE;
    if (p.bounds) v = Math.min(Math.max(v, p.bounds[0]), p.bounds[1]);
    const grid = space.grids[i];
    if (grid) return grid.nearest(v);
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
  /** What the client evaluates, keyed by parameter name, in user units: the active parameters. */
  parameters: Record<string, ParamValue>;
  /** The internal coordinates of exactly that point (what the engine learns from). */
  point: number[];
}

/** Internal point → the legal user-unit point handed out, and its internal coordinates. */
export function materialize(space: SearchSpace, u: readonly number[]): Materialized {
  const x = legalize(space, toUserRaw(space, u));
  return { parameters: activeNamed(space, x), point: toInternal(space, x) };
}

/**
 * The search box in internal coordinates for BO/πBO (ALGORITHM.md §6), or null. A categorical
 * coordinate's range is its index range [0, K − 1].
 */
export function internalBox(space: SearchSpace, boxStd: number): { lower: number[]; upper: number[] } | null {
  const d = space.numeric.length;
  if (!space.diagonal) return null; // the strategy then uses prior mean ± box_std·std; points are projected
  const lower: number[] = [];
  const upper: number[] = [];
  space.numeric.forEach((p, i) => {
    const s = space.L0.data[i * d + i]!;
    if (p.bounds) {
      lower.push((T(p, p.bounds[0]) - space.m0[i]!) / s);
      upper.push((T(p, p.bounds[1]) - space.m0[i]!) / s);
    } else {
      lower.push(-boxStd);
      upper.push(boxStd);
    }
  });
  for (const p of space.categorical) {
    lower.push(0);
    upper.push(p.choices.length - 1);
  }
  return { lower, upper };
}

/**
 * A reported value of a stepped parameter as the grid value it stands for (grid.ts's indexOf: the
 * float noise of a client's own arithmetic is dropped, so 0.1·3 is stored, compared for repeats and
 * learnt from as 0.3), or null when it is off the grid. Other values are returned as they are.
 */
export function onGrid(space: SearchSpace, i: number, v: number): number | null {
  const grid = space.grids[i];
  if (!grid) return v;
  const k = grid.indexOf(v);
  return k === null ? null : grid.value(k);
}

/** Parameters given by name (an external observation) → user-unit vector in parameter order (undefined where an inactive one is absent). */
export function vectorFromNamed(space: SearchSpace, named: Record<string, ParamValue>): ParamValue[] {
  return space.parameters.map((p) => (Object.hasOwn(named, p.name) ? named[p.name]! : (undefined as unknown as ParamValue)));
}
