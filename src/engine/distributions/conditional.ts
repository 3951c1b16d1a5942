/**
 * Conditional coordinates (ALGORITHM.md §30): a coordinate that is active only when a categorical
 * coordinate (its parent, itself active) holds one of a set of choices, to any depth. The engine
 * keeps one coordinate per parameter (a fixed dimension); which of them are active is a function of
 * the point's choice indices alone, so it is exact wherever a point comes from (drawn, refined,
 * reported).
 *
 * Glossary: a mixed point x = [u (d_c), c (m)]; K_j the choices of categorical coordinate d_c + j.
 * A condition {index, parent, values}: coordinate `index` is active iff `parent` (a categorical
 * coordinate, d_c ≤ parent < dim) is active and round(x[parent]) ∈ values (choice indices).
 * Conditions are listed parents first (a topological order), at most one per coordinate.
 *
 * Imputation (the GP methods): in the GP input φ(x), an inactive continuous column is a constant
 * and an inactive parameter's one-hot block is all zeros, so two points that differ only in inactive
 * coordinates have the same φ and the model cannot tell them apart: f is modelled as independent of
 * whatever the inactive coordinates hold.
 */
import { InvalidInputError } from '../errors.js';

/** One conditional coordinate, in engine coordinates (InitSpec.conditions). */
export interface Condition {
  index: number;
  parent: number;
  values: number[];
}

/** The conditions as given, checked against the layout (dc continuous coordinates, then K.length choices). */
export function checkConditions(conditions: unknown, dc: number, K: readonly number[]): Condition[] {
  if (!Array.isArray(conditions)) throw new InvalidInputError('conditions must be an array');
  const dim = dc + K.length;
  const seen = new Set<number>();
  const out: Condition[] = [];
  const list = conditions as unknown[];
  const later = (p: number, coordinate: number) => list.slice(p + 1).some((o) => (o as Partial<Condition> | null)?.index === coordinate);
  for (const [p, c] of list.entries()) {
    const { index, parent, values } = (c ?? {}) as Partial<Condition>;
    if (!Number.isInteger(index) || index! < 0 || index! >= dim || seen.has(index!)) throw new InvalidInputError(`condition index ${String(index)} must be a distinct coordinate below ${dim}`);
    if (!Number.isInteger(parent) || parent! < dc || parent! >= dim || parent === index) throw new InvalidInputError(`condition parent ${String(parent)} must be another categorical coordinate (${dc} … ${dim - 1})`);
    // Parents first: a parent's own condition (if any) must come earlier, which also rules out cycles.
    if (later(p, parent!)) {
      throw new InvalidInputError(`condition of coordinate ${index} comes before its parent's (${parent}): list parents first`);
    }
    const k = K[parent! - dc]!;
    if (!Array.isArray(values) || values.length === 0 || !values.every((v) => Number.isInteger(v) && v >= 0 && v < k)) throw new InvalidInputError(`condition values of coordinate ${index} must be choice indices of coordinate ${parent} (0 … ${k - 1})`);
    seen.add(index!);
    out.push({ index: index!, parent: parent!, values: [...values] });
  }
  return out;
}

/** Which coordinates of x are active (true for every coordinate without a condition). */
export function activeMask(conditions: readonly Condition[], x: ArrayLike<number>): boolean[] {
  const active = Array.from({ length: x.length }, () => true);
  for (const c of conditions) active[c.index] = active[c.parent]! && c.values.includes(Math.round(x[c.parent]!));
  return active;
}

/**
 * φ with the inactive coordinates imputed: continuous column i of an inactive coordinate becomes
 * `fill[i]`, an inactive categorical coordinate's one-hot block becomes zeros. φ is
 * [continuous (dc), one-hot blocks (K_j each)], as gp/mixed-kernel.ts encodes it; returns φ itself
 * when every coordinate is active.
 */
export function impute(phi: number[], active: readonly boolean[], dc: number, K: readonly number[], fill: readonly number[]): number[] {
  if (active.every(Boolean)) return phi;
  const out = [...phi];
  for (let i = 0; i < dc; i++) if (!active[i]) out[i] = fill[i]!;
  let o = dc;
  K.forEach((k, j) => {
    if (!active[dc + j]) for (let a = 0; a < k; a++) out[o + a] = 0;
    o += k;
  });
  return out;
}
