/**
 * Seedable random numbers whose whole state is plain JSON (ARCHITECTURE.md rule 3).
 *
 * Built on pure-rand's xoroshiro128+ (integer arithmetic only, so the same seed gives the same
 * stream on every platform). `Rng` is a small mutable cursor used inside one engine call; what is
 * stored with a study is `rng.state()`, a `{ kind, words }` object, and `Rng.fromState` resumes it.
 *
 * Glossary: d = dimension; `mean` (d), `cholFactor` L (d×d, lower, Σ = L Lᵀ).
 */
import { xoroshiro128plus, xoroshiro128plusFromState } from 'pure-rand/generator/xoroshiro128plus';
import type { JumpableRandomGenerator } from 'pure-rand/types/JumpableRandomGenerator';

export interface RngState {
  kind: 'xoroshiro128plus';
  words: number[];
}

const TWO_POW_32 = 4294967296;
const TWO_POW_53 = 9007199254740992;

function mix32(x: number): number {
  let h = x ^ 0x9e3779b9;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) | 0;
}

export class Rng {
  private constructor(private readonly g: JumpableRandomGenerator) {}

  /** A generator from a seed (any finite number; it is reduced to a 32-bit integer). */
  static fromSeed(seed: number): Rng {
    if (!Number.isFinite(seed)) throw new RangeError(`seed must be finite, got ${seed}`);
    // pure-rand seeds xoroshiro128+ directly from the 32-bit seed, and the first outputs of
    // nearby seeds are strongly correlated (seed 7 starts with 0.9999999998). Scramble the seed
    // (murmur3 finaliser) and discard a few outputs so that small consecutive seeds look independent.
    const g = xoroshiro128plus(mix32(Math.trunc(seed) | 0));
    for (let i = 0; i < 16; i++) g.next();
    return new Rng(g);
  }

  static fromState(state: RngState): Rng {
    if (state?.kind !== 'xoroshiro128plus' || !Array.isArray(state.words) || state.words.length !== 4) {
      throw new RangeError('invalid RNG state');
    }
    return new Rng(xoroshiro128plusFromState(state.words));
  }

  /** Plain-JSON snapshot; resuming from it continues the stream exactly. */
  state(): RngState {
    return { kind: 'xoroshiro128plus', words: [...this.g.getState()] };
  }

  /** Unsigned 32-bit integer. */
  uint32(): number {
    return this.g.next() >>> 0;
  }

  /** Uniform in [0, 1), 53 random bits (two 32-bit draws). */
  uniform(): number {
    const hi = this.uint32() >>> 5; // 27 bits
    const lo = this.uint32() >>> 6; // 26 bits
    return (hi * 67108864 + lo) / TWO_POW_53;
  }

  /** Uniform in (0, 1): never exactly 0, so safe inside log(). */
  uniformOpen(): number {
    let u = this.uniform();
    while (u === 0) u = this.uniform();
    return u;
  }

  /** Uniform integer in [0, n). Rejection sampling keeps it unbiased. */
  int(n: number): number {
    if (!(n >= 1 && n <= TWO_POW_32 && Number.isInteger(n))) throw new RangeError(`int(n) needs an integer 1 ≤ n ≤ 2^32, got ${n}`);
    const limit = TWO_POW_32 - (TWO_POW_32 % n);
    let x = this.uint32();
    while (x >= limit) x = this.uint32();
    return x % n;
  }

  /** One standard normal (Box–Muller, cosine branch; the sine branch is filled in `fillNormal`). */
  normal(): number {
    const u1 = this.uniformOpen();
    const u2 = this.uniform();
    return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  }

  /** Fills `out` with independent standard normals, using both Box–Muller branches. */
  fillNormal(out: Float64Array | number[]): void {
    const n = out.length;
    let i = 0;
    for (; i + 1 < n; i += 2) {
      const r = Math.sqrt(-2 * Math.log(this.uniformOpen()));
      const a = 2 * Math.PI * this.uniform();
      out[i] = r * Math.cos(a);
      out[i + 1] = r * Math.sin(a);
    }
    if (i < n) out[i] = this.normal();
  }

  normals(n: number): Float64Array {
    const out = new Float64Array(n);
    this.fillNormal(out);
    return out;
  }

  /** A new seed for a child stream (used to give parallel work independent generators). */
  nextSeed(): number {
    return this.uint32() | 0;
  }
}

/**
 * x = mean + L z with z ~ N(0, I): one draw from N(mean, L Lᵀ). `cholFactor` is row-major
 * lower-triangular, as returned by engine/linalg `cholesky`.
 */
export function sampleMvn(rng: Rng, mean: ArrayLike<number>, cholFactor: ArrayLike<number>[], out?: Float64Array): Float64Array {
  const d = mean.length;
  const z = rng.normals(d);
  const x = out ?? new Float64Array(d);
  for (let i = 0; i < d; i++) {
    const row = cholFactor[i];
    let s = mean[i];
    for (let k = 0; k <= i; k++) s += row[k] * z[k];
    x[i] = s;
  }
  return x;
}
