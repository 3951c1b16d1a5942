/**
 * BBOB f1–f14 (separable, low/moderate conditioning, high conditioning unimodal), each written from
 * its definition in RR-6829. A builder takes the dimension and the instance seed (instances.ts) and
 * returns x_opt and f − f_opt; bbob.ts adds f_opt.
 *
 * Which seed draws which rotation (checked value by value against the reference values): where a
 * definition applies R alone or R first and Q inside (f10–f12, f14–f18), R = rotation(seed + 10⁶)
 * and Q = rotation(seed); where it reads QΛ^αR (f6, f7, f13, f23, f24), the inner R is
 * rotation(seed) and the outer Q is rotation(seed + 10⁶); f9, f19, f21, f22 have one rotation,
 * rotation(seed). INNER and OUTER below name the two draws.
 */
import { bbobRotation, bbobXopt } from './instances.js';
import { composeDiag, fpen, identity, lambdaDiag, matVec, ramp, rastrigin, shift, tasyInPlace, tosz, toszInPlace, weightedSquares } from './transforms.js';

/** One instance of one function, without f_opt. */
export interface BbobParts {
  xopt: number[];
  /** f(x) − f_opt. */
  raw(x: ArrayLike<number>): number;
}

export type BbobBuilder = (d: number, seed: number) => BbobParts;

/** rotation(seed + 10⁶) and rotation(seed). */
export const R_OF = (d: number, seed: number) => bbobRotation(d, seed + 1000000);
export const Q_OF = (d: number, seed: number) => bbobRotation(d, seed);
/** For the QΛ^αR functions: the definition's Q (applied last) and R (applied first). */
export const OUTER_Q = R_OF, INNER_R = Q_OF;

/** Weights 10^{k·i/(d−1)}: the ellipsoid's 10⁶ conditioning (k = 6) and the step ellipsoid's 10² (k = 2). */
const powers = (k: number, d: number) => ramp(d).map((t) => 10 ** (k * t));

/** f1 Sphere: ‖z‖², z = x − x_opt. */
const f1: BbobBuilder = (d, seed) => {
  const xopt = bbobXopt(d, seed);
  const w = new Float64Array(d).fill(1), z = new Float64Array(d);
  return { xopt, raw: (x) => weightedSquares(w, shift(x, xopt, z)) };
};

/** f2 Ellipsoid, separable: Σ 10^{6(i−1)/(D−1)} z_i², z = T_osz(x − x_opt). */
const f2: BbobBuilder = (d, seed) => {
  const xopt = bbobXopt(d, seed);
  const w = powers(6, d), z = new Float64Array(d);
  return { xopt, raw: (x) => weightedSquares(w, toszInPlace(shift(x, xopt, z))) };
};

/** f3 Rastrigin, separable: 10(D − Σcos 2πz_i) + ‖z‖², z = Λ^10 T_asy^0.2(T_osz(x − x_opt)). */
const f3: BbobBuilder = (d, seed) => {
  const xopt = bbobXopt(d, seed);
  const t = ramp(d), lam = lambdaDiag(10, d), z = new Float64Array(d);
  return {
    xopt,
    raw: (x) => {
      tasyInPlace(toszInPlace(shift(x, xopt, z)), 0.2, t);
      for (let i = 0; i < d; i++) z[i] *= lam[i];
      return rastrigin(z);
    },
  };
};

/**
 * f4 Büche–Rastrigin: the Rastrigin core on z_i = s_i T_osz(x_i − x_opt,i), s_i = 10·10^{½(i−1)/(D−1)}
 * if z_i > 0 and i odd (1-based), else 10^{½(i−1)/(D−1)}; + 100 f_pen. x_opt's odd (1-based)
 * coordinates are made positive, where the extra factor 10 makes the function steeper.
 */
const f4: BbobBuilder = (d, seed) => {
  const xopt = bbobXopt(d, seed).map((v, i) => (i % 2 === 0 ? Math.abs(v) : v));
  const lam = lambdaDiag(10, d), z = new Float64Array(d);
  return {
    xopt,
    raw: (x) => {
      toszInPlace(shift(x, xopt, z));
      for (let i = 0; i < d; i++) z[i] *= (i % 2 === 0 && z[i] > 0 ? 10 : 1) * lam[i];
      return rastrigin(z) + 100 * fpen(x);
    },
  };
};

/**
 * f5 Linear slope: Σ 5|s_i| − s_i z_i, s_i = sign(x_opt,i)·10^{(i−1)/(D−1)}, x_opt = ±5 (a corner);
 * z_i = x_i inside, and x_opt,i beyond the corner (x_opt,i·x_i ≥ 25), so the optimum is the whole
 * orthant beyond x_opt and f_opt is the minimum.
 */
const f5: BbobBuilder = (d, seed) => {
  const xopt = bbobXopt(d, seed).map((v) => (v > 0 ? 5 : -5));
  const s = ramp(d).map((t, i) => Math.sign(xopt[i]) * 10 ** t);
  return {
    xopt,
    raw: (x) => {
      let f = 0;
      for (let i = 0; i < d; i++) f += 5 * Math.abs(s[i]) - s[i] * (xopt[i] * x[i] < 25 ? x[i] : xopt[i]);
      return f;
    },
  };
};

/** z = QΛ^αR(x − x_opt), the input of f6, f13 and f23. */
export function qLambdaR(d: number, seed: number, alpha: number): { xopt: number[]; z(x: ArrayLike<number>): Float64Array } {
  const xopt = bbobXopt(d, seed);
  const M = composeDiag(OUTER_Q(d, seed), lambdaDiag(alpha, d), INNER_R(d, seed), d), y = new Float64Array(d), z = new Float64Array(d);
  return { xopt, z: (x) => matVec(M, shift(x, xopt, y), d, z) };
}

/** f6 Attractive sector: T_osz(Σ(s_i z_i)²)^0.9, z = QΛ^10R(x − x_opt), s_i = 10² where z_i·x_opt,i > 0, else 1. */
const f6: BbobBuilder = (d, seed) => {
  const { xopt, z } = qLambdaR(d, seed, 10);
  const sector = (v: Float64Array): number => v.reduce((s, zi, i) => s + (zi * xopt[i] > 0 ? 1e4 : 1) * zi * zi, 0);
  return { xopt, raw: (x) => tosz(sector(z(x))) ** 0.9 };
};

/**
 * f7 Step ellipsoid: 0.1·max(|ẑ_1|/10⁴, Σ 10^{2(i−1)/(D−1)} z_i²) + f_pen, ẑ = Λ^10R(x − x_opt),
 * z̃_i = ⌊0.5 + ẑ_i⌋ if |ẑ_i| > 0.5 else ⌊0.5 + 10ẑ_i⌋/10 (the plateaus), z = Qz̃.
 */
const f7: BbobBuilder = (d, seed) => {
  const xopt = bbobXopt(d, seed);
  const LR = composeDiag(identity(d), lambdaDiag(10, d), INNER_R(d, seed), d), Q = OUTER_Q(d, seed);
  const w = powers(2, d), y = new Float64Array(d), zh = new Float64Array(d), z = new Float64Array(d);
  return {
    xopt,
    raw: (x) => {
      matVec(LR, shift(x, xopt, y), d, zh);
      const first = Math.abs(zh[0]);
      for (let i = 0; i < d; i++) zh[i] = Math.abs(zh[i]) > 0.5 ? Math.floor(0.5 + zh[i]) : Math.floor(0.5 + 10 * zh[i]) / 10;
      return 0.1 * Math.max(first / 1e4, weightedSquares(w, matVec(Q, zh, d, z))) + fpen(x);
    },
  };
};

/** Rosenbrock's core Σ_{i<D} 100(z_i² − z_{i+1})² + (z_i − 1)², shared by f8 and f9. */
export function rosenbrock(z: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < z.length - 1; i++) s += 100 * (z[i] * z[i] - z[i + 1]) ** 2 + (z[i] - 1) ** 2;
  return s;
}

/** Rosenbrock's scaling max(1, √D/8), which keeps the valley's length comparable across dimensions. */
export const rosenbrockScale = (d: number) => Math.max(1, Math.sqrt(d) / 8);

/** f8 Rosenbrock, original: z = max(1, √D/8)(x − x_opt) + 1, x_opt drawn in [−3, 3]^D (0.75 × the usual). */
const f8: BbobBuilder = (d, seed) => {
  const xopt = bbobXopt(d, seed).map((v) => 0.75 * v);
  const c = rosenbrockScale(d), z = new Float64Array(d);
  return {
    xopt,
    raw: (x) => {
      for (let i = 0; i < d; i++) z[i] = c * (x[i] - xopt[i]) + 1;
      return rosenbrock(z);
    },
  };
};

/** The rotated Rosenbrock map z = max(1, √D/8)·R x + ½ (R = rotation(seed)) and its x_opt = R^T 1/(2·scale), shared by f9 and f19. */
export function rotatedRosenbrockMap(d: number, seed: number): { xopt: number[]; map(x: ArrayLike<number>, z: Float64Array): Float64Array } {
  const R = Q_OF(d, seed), c = rosenbrockScale(d);
  const xopt = Array.from({ length: d }, (_, j) => {
    let s = 0;
    for (let i = 0; i < d; i++) s += R[i * d + j];
    return (0.5 * s) / c;
  });
  return {
    xopt,
    map: (x, z) => {
      matVec(R, x, d, z);
      for (let i = 0; i < d; i++) z[i] = c * z[i] + 0.5;
      return z;
    },
  };
}

/** f9 Rosenbrock, rotated. */
const f9: BbobBuilder = (d, seed) => {
  const { xopt, map } = rotatedRosenbrockMap(d, seed);
  const z = new Float64Array(d);
  return { xopt, raw: (x) => rosenbrock(map(x, z)) };
};

/** z = T_osz(R(x − x_opt)), the input of f10 and f11. */
function oscillatedRotation(d: number, seed: number): { xopt: number[]; z(x: ArrayLike<number>): Float64Array } {
  const xopt = bbobXopt(d, seed), R = R_OF(d, seed), y = new Float64Array(d), z = new Float64Array(d);
  return { xopt, z: (x) => toszInPlace(matVec(R, shift(x, xopt, y), d, z)) };
}

/** f10 Ellipsoid: Σ 10^{6(i−1)/(D−1)} z_i², z = T_osz(R(x − x_opt)). */
const f10: BbobBuilder = (d, seed) => {
  const { xopt, z } = oscillatedRotation(d, seed), w = powers(6, d);
  return { xopt, raw: (x) => weightedSquares(w, z(x)) };
};

/** f11 Discus: 10⁶z_1² + Σ_{i≥2} z_i², z = T_osz(R(x − x_opt)). */
const f11: BbobBuilder = (d, seed) => {
  const { xopt, z } = oscillatedRotation(d, seed), w = new Float64Array(d).fill(1);
  w[0] = 1e6;
  return { xopt, raw: (x) => weightedSquares(w, z(x)) };
};

/** f12 Bent cigar: z_1² + 10⁶ Σ_{i≥2} z_i², z = R T_asy^0.5(R(x − x_opt)); x_opt from seed + 10⁶ as the suite draws it. */
const f12: BbobBuilder = (d, seed) => {
  const xopt = bbobXopt(d, seed + 1000000), R = R_OF(d, seed), t = ramp(d);
  const w = new Float64Array(d).fill(1e6), y = new Float64Array(d), u = new Float64Array(d), z = new Float64Array(d);
  w[0] = 1;
  return { xopt, raw: (x) => weightedSquares(w, matVec(R, tasyInPlace(matVec(R, shift(x, xopt, y), d, u), 0.5, t), d, z)) };
};

/** f13 Sharp ridge: z_1² + 100·√(Σ_{i≥2} z_i²), z = QΛ^10R(x − x_opt). */
const f13: BbobBuilder = (d, seed) => {
  const { xopt, z } = qLambdaR(d, seed, 10);
  const ridge = (v: Float64Array): number => v[0] * v[0] + 100 * Math.sqrt(v.reduce((s, zi, i) => (i === 0 ? s : s + zi * zi), 0));
  return { xopt, raw: (x) => ridge(z(x)) };
};

/** f14 Different powers: √(Σ |z_i|^{2 + 4(i−1)/(D−1)}), z = R(x − x_opt). */
const f14: BbobBuilder = (d, seed) => {
  const xopt = bbobXopt(d, seed), R = R_OF(d, seed);
  const p = ramp(d).map((t) => 2 + 4 * t), y = new Float64Array(d), z = new Float64Array(d);
  return {
    xopt,
    raw: (x) => {
      matVec(R, shift(x, xopt, y), d, z);
      let s = 0;
      for (let i = 0; i < d; i++) s += Math.abs(z[i]) ** p[i];
      return Math.sqrt(s);
    },
  };
};

export const F01_F14: readonly BbobBuilder[] = [f1, f2, f3, f4, f5, f6, f7, f8, f9, f10, f11, f12, f13, f14];
