/**
 * xNES and SNES on a space with categorical parameters (InitSpec.categories; ALGORITHM.md §27,
 * §30): the continuous dimension, box and a generation's mixed update (lq-CMA-ES, built on CatCMA,
 * uses catcma.ts's parts directly). Their search distribution is the method's own Gaussian over the
 * d_c continuous coordinates times one categorical distribution q_j per categorical parameter,
 * ν = N(μ, Σ) × Π_j Cat(q_j), as CatCMA's (catcma.ts); a point is [u, c].
 *
 * The Gaussian part is each method's own update on the continuous coordinates, ranked by the whole
 * point's value. The categorical part is CatCMA's, the same functions (catcma.ts `startCategorical`,
 * `updateCategorical`, `catUpdate`): the natural gradient ĝ_j = Σ_i w_i (e_{c_i,j} − q_j) with CatCMA's weights (positive for the best
 * ⌊λ/2⌋, summing to 1), a step of Fisher length δ adapted by ASNG, then the margin. The methods' own
 * utilities (NES: sum 0, the worse half negative) are not used for q: CatCMA's margin and ASNG step
 * are derived and tuned for its non-negative weights, and one update for q across the ES baselines
 * keeps them comparable.
 *
 * Glossary: q (m rows, K_j each) = `categorical`; `asng` ASNG's state (cma-core.ts AsngState);
 * d_c = dim − m (distributions/categorical.ts mixedLayout).
 */
import { InvalidInputError } from '../errors.js';
import { mixedLayout } from '../distributions/categorical.js';
import { updateCategorical, type CategoricalPart } from './catcma.js';
import type { AsngState } from './cma-core.js';
import { orderBestFirst } from './es-utils.js';
import type { InitSpec, Observation } from './types.js';

/** d_c, the coordinates the method's Gaussian covers: all of them in a numeric study, the dim − m continuous ones otherwise. */
export function continuousDim(spec: InitSpec, method: string): number {
  const dc = spec.dim - (spec.categories?.length ?? 0);
  if (dc < 0) throw new InvalidInputError(`${method}: a mixed space needs categories and dim ≥ their number`);
  return dc;
}

/** The first d_c coordinates of the study's box (InitSpec.box covers every coordinate, choices last). */
export function continuousBox(box: { lower: number[]; upper: number[] } | null | undefined, dc: number): { lower: number[]; upper: number[] } | null {
  return box ? { lower: box.lower.slice(0, dc), upper: box.upper.slice(0, dc) } : null;
}

/**
 * One generation's update of a Gaussian method with categorical parameters: `gaussianStep` on the
 * told points' continuous coordinates (when there are any) and CatCMA's on q (from at least two
 * points: one carries no ranking, and q is kept). A numeric state is `gaussianStep` on the whole points.
 */
export function mixedStep<G extends object>(
  state: { dim: number; categorical?: number[][]; asng?: AsngState },
  batch: readonly Observation[],
  gaussianStep: (xs: number[][]) => G,
): G | Partial<G & CategoricalPart> {
  if (!state.categorical) return gaussianStep(batch.map((o) => o.x));
  const { dc } = mixedLayout(state);
  const gauss = dc > 0 ? gaussianStep(batch.map((o) => o.x.slice(0, dc))) : {};
  const cat = batch.length < 2 ? {} : updateCategorical(state, orderBestFirst(batch).map((i) => batch[i]!.x.slice(dc)));
  return { ...gauss, ...cat };
}
