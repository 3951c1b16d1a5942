/**
 * Stepped parameters (Optuna's `step`): a float or int parameter with bounds [low, high] and a step
 * takes only the values low + k·step, k = 0 … K, K = ⌊(high − low)/step⌋. An int parameter's step is
 * 1 by default (the integers; it then keeps the plain rounding of transforms.ts), and a float's is
 * absent (continuous).
 *
 * Grid values are computed in decimal, not in binary floating point: low and step are read as the
 * shortest decimals that print as them (what the client typed, for numbers parsed from JSON), the
 * sum low + k·step is exact in decimal (BigInt digits), and only the result is rounded to a double.
 * So a 0.1-step hands out 0.3 and never 0.30000000000000004 (0.1·3 in binary), and the value a
 * client types for a grid point is exactly the value handed out — which matters because repeats
 * are compared by exact value (loop/no-repeat.ts). K is computed the same way, so a high that lies
 * on the grid in decimal (1 for [0, 1] with step 0.1) is its last point even where (high − low)/step
 * is 9.999999999999998 in binary. (Optuna moves an off-grid high onto its grid in decimal too.)
 */

/** A finite number as an exact decimal: digits × 10^exponent. */
interface Decimal {
  digits: bigint;
  exponent: number;
}

/** The shortest decimal that prints as x (JavaScript's own number-to-string), exactly. */
function decimalOf(x: number): Decimal {
  const [mantissa, exp] = String(x).split('e');
  const [whole, fraction = ''] = mantissa!.split('.');
  return { digits: BigInt(whole! + fraction), exponent: Number(exp ?? 0) - fraction.length };
}

const scaled = (d: Decimal, exponent: number): bigint => d.digits * 10n ** BigInt(d.exponent - exponent);

/**
 * A step at least this fraction of max(|low|, |high|): then a grid value's float noise (a few ulps,
 * see `tolerance`) stays a tiny fraction of a step, so a value is told from its neighbours for
 * certain; and a grid of more than about 2·10⁸ points is a continuous parameter in all but name.
 */
export const MIN_STEP_RATIO = 1e-8;

/** One parameter's grid, built once per search space. */
export class Grid {
  readonly low: number;
  readonly step: number;
  /** The last index: the grid is low + k·step for k = 0 … last. */
  readonly last: number;
  private readonly lowDec: Decimal;
  private readonly stepDec: Decimal;
  private readonly exponent: number;
  /** How far a reported value may be from a grid value and still be taken as it (see `indexOf`). */
  private readonly tolerance: number;

  /** low < high, step > 0 finite and at most high − low (study-spec.ts checks them before). */
  constructor(low: number, high: number, step: number) {
    this.low = low;
    this.step = step;
    this.lowDec = decimalOf(low);
    this.stepDec = decimalOf(step);
    const highDec = decimalOf(high);
    this.exponent = Math.min(this.lowDec.exponent, this.stepDec.exponent, highDec.exponent);
    // A client's own arithmetic (0.1·3, or low + k·step in binary) is off by a few ulps of the values:
    // 2⁻⁴⁸·max(|low|, |high|) is 16 of them at the larger bound, and 1e-9 of a step covers values
    // rounded to nine significant digits of the step. Both are far below half a step (MIN_STEP_RATIO).
    this.tolerance = 1e-9 * step + 2 ** -48 * Math.max(Math.abs(low), Math.abs(high));
    const width = scaled(highDec, this.exponent) - scaled(this.lowDec, this.exponent);
    this.last = Number(width / scaled(this.stepDec, this.exponent));
    // A high just below a grid value by float noise is that value: a client that computes its high as
    // low + K·step in binary sends 3·0.3 = 0.8999999999999999 for [0, 0.9], whose grid must still end
    // at 0.9, not 0.6.
    if (this.value(this.last + 1) - high <= this.tolerance) this.last += 1;
  }

  /** low + k·step, exact in decimal, rounded once to the nearest double. */
  value(k: number): number {
    const digits = scaled(this.lowDec, this.exponent) + BigInt(k) * scaled(this.stepDec, this.exponent);
    return Number(`${digits}e${this.exponent}`);
  }

  /** The last grid value: high itself when it lies on the grid, else the last value below it (or just above, by float noise). */
  get high(): number {
    return this.value(this.last);
  }

  /**
   * (x − low)/step, the fractional grid index of x. Bounds near the largest doubles overflow x − low
   * (1e308 − −1e308); the quotients taken apart do not (each is at most 1/MIN_STEP_RATIO in size).
   */
  private position(x: number): number {
    const r = (x - this.low) / this.step;
    return Number.isFinite(r) ? r : x / this.step - this.low / this.step;
  }

  /** The nearest grid value to x (x projected onto [low, high] first). */
  nearest(x: number): number {
    const k = Math.round(this.position(x));
    return this.value(Math.min(Math.max(Number.isFinite(k) ? k : x > this.low ? this.last : 0, 0), this.last));
  }

  /**
   * The index of the grid value a reported value stands for, or null when it is not one: within
   * `tolerance` of low + k·step, so the float noise of a client's own low + k·step (0.30000000000000004)
   * is that grid value; anything further is off the grid.
   */
  indexOf(x: number): number | null {
    const k = Math.round(this.position(x));
    if (!(k >= 0 && k <= this.last)) return null;
    return Math.abs(x - this.value(k)) <= this.tolerance ? k : null;
  }

  /** The grid values either side of x, for a message about an off-grid value. */
  neighbours(x: number): number[] {
    const k = Math.min(Math.max(Math.floor(this.position(x)), 0), this.last);
    return [...new Set([this.value(k), this.value(Math.min(k + 1, this.last))])];
  }
}

/** The parameter's step: as given, 1 for an int parameter without one, null for a continuous float. */
export function stepOf(p: { type: string; step?: number | null }): number | null {
  return p.step ?? (p.type === 'int' ? 1 : null);
}

/**
 * The grid a parameter's values must lie on beyond what ints already have, or null: a float with a
 * step, or an int whose step is not 1. (An int with step 1 keeps the rounding and integer checks it
 * always had, so those studies hand out exactly what they did before.)
 */
export function gridOf(p: { type: string; bounds: readonly [number, number] | null; step?: number | null }): Grid | null {
  const step = stepOf(p);
  if (step === null || (p.type === 'int' && step === 1) || !p.bounds) return null;
  return new Grid(p.bounds[0], p.bounds[1], step);
}
