/**
 * The BBOB instance generator (Hansen, Finck, Ros, Auger, INRIA RR-6829, and the BBOB 2009
 * experimental setup): every random quantity of an instance — x_opt, f_opt, the rotations R and Q,
 * Gallagher's peaks — comes from the suite's own uniform generator (a Park–Miller minimal-standard
 * LCG shuffled through a 32-entry Bays–Durham table) and its Box–Muller normals, seeded from the
 * function and the instance. Reproducing the generator exactly, rather than drawing from our own Rng,
 * is what makes instance k here the instance k of every published BBOB result.
 */

/** Instance seed: function 4 shares function 3's seeds and 18 shares 17's, as the suite defines. */
export function bbobSeed(fn: number, instance: number): number {
  const base = fn === 4 ? 3 : fn === 18 ? 17 : fn;
  return base + 10000 * instance;
}

const LCG_A = 16807, LCG_Q = 127773, LCG_R = 2836, LCG_M = 2147483647;

/** One step of the minimal-standard LCG by Schrage's method (no overflow beyond 2^31). */
export function lcgStep(s: number): number {
  const t = Math.floor(s / LCG_Q);
  const next = LCG_A * (s - t * LCG_Q) - LCG_R * t;
  return next < 0 ? next + LCG_M : next;
}

/** n uniforms in (0, 1], the same for a given seed. */
export function bbobUniform(n: number, seed: number): Float64Array {
  let s = Math.max(1, Math.abs(seed));
  const table = new Array<number>(32);
  // 40 warm-up steps; the last 32 fill the shuffle table (index 31 first).
  for (let i = 39; i >= 0; i--) {
    s = lcgStep(s);
    if (i < 32) table[i] = s;
  }
  let last = table[0];
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    s = lcgStep(s);
    const k = Math.floor(last / 67108865); // 2^31 / 32, rounded up: a table index 0…31
    last = table[k];
    table[k] = s;
    out[i] = last / 2.147483647e9;
    if (out[i] === 0) out[i] = 1e-99;
  }
  return out;
}

/** n standard normals by Box–Muller from 2n uniforms of `seed` (first half radii, second half angles). */
export function bbobGauss(n: number, seed: number): Float64Array {
  const u = bbobUniform(2 * n, seed);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    out[i] = Math.sqrt(-2 * Math.log(u[i])) * Math.cos(2 * Math.PI * u[n + i]);
    if (out[i] === 0) out[i] = 1e-99;
  }
  return out;
}

/** x_opt uniform on the grid of step 8·10⁻⁴ in [−4, 4]^d (0 is moved to −10⁻⁵ so signs are defined). */
export function bbobXopt(d: number, seed: number): number[] {
  return Array.from(bbobUniform(d, seed), (u) => {
    const x = (8 * Math.floor(1e4 * u)) / 1e4 - 4;
    return x === 0 ? -1e-5 : x;
  });
}

/** f_opt: a Cauchy-distributed value (ratio of two normals) rounded to 0.01 and clipped to ±1000. */
export function bbobFopt(fn: number, instance: number): number {
  const seed = bbobSeed(fn, instance);
  const ratio = bbobGauss(1, seed)[0] / bbobGauss(1, seed + 1)[0];
  return Math.min(1000, Math.max(-1000, roundHalfAway(100 * 100 * ratio) / 100));
}

function roundHalfAway(v: number): number {
  return Math.sign(v) * Math.round(Math.abs(v));
}

/**
 * A d×d orthogonal matrix (row-major): standard normal entries, column j filled from g[j·d …],
 * then Gram–Schmidt over the columns in order.
 */
export function bbobRotation(d: number, seed: number): Float64Array {
  const g = bbobGauss(d * d, seed);
  const B = new Float64Array(d * d);
  for (let i = 0; i < d; i++) for (let j = 0; j < d; j++) B[i * d + j] = g[j * d + i];
  for (let c = 0; c < d; c++) {
    for (let p = 0; p < c; p++) {
      let dot = 0;
      for (let k = 0; k < d; k++) dot += B[k * d + c] * B[k * d + p];
      for (let k = 0; k < d; k++) B[k * d + c] -= dot * B[k * d + p];
    }
    let norm = 0;
    for (let k = 0; k < d; k++) norm += B[k * d + c] * B[k * d + c];
    norm = Math.sqrt(norm);
    for (let k = 0; k < d; k++) B[k * d + c] /= norm;
  }
  return B;
}

/** Indices that sort `v` ascending (ties never occur for the generator's doubles). */
export function argsort(v: ArrayLike<number>): number[] {
  return Array.from({ length: v.length }, (_, i) => i).sort((a, b) => v[a] - v[b]);
}
