/**
 * BBOB f15–f24 (multimodal with adequate, then weak global structure), each written from its
 * definition in RR-6829; conventions as in f01-f14.ts.
 */
import { type BbobBuilder, INNER_R, OUTER_Q, Q_OF, qLambdaR, R_OF, rotatedRosenbrockMap } from './f01-f14.js';
import { argsort, bbobGauss, bbobRotation, bbobUniform, bbobXopt } from './instances.js';
import { composeDiag, fpen, identity, lambdaDiag, matVec, ramp, rastrigin, shift, tasyInPlace, tosz, toszInPlace } from './transforms.js';

/** f15 Rastrigin: 10(D − Σcos 2πz_i) + ‖z‖², z = RΛ^10Q T_asy^0.2(T_osz(R(x − x_opt))). */
const f15: BbobBuilder = (d, seed) => {
  const xopt = bbobXopt(d, seed), R = R_OF(d, seed), t = ramp(d);
  const M = composeDiag(R, lambdaDiag(10, d), Q_OF(d, seed), d), y = new Float64Array(d), u = new Float64Array(d), z = new Float64Array(d);
  return { xopt, raw: (x) => rastrigin(matVec(M, tasyInPlace(toszInPlace(matVec(R, shift(x, xopt, y), d, u)), 0.2, t), d, z)) };
};

const WEIERSTRASS_K = 12;
/** f0 = Σ_k 2^{−k} cos(2π 3^k ½) = Σ_k −2^{−k}: the inner sum at z = 0, so that f16(x_opt) = f_opt. */
const WEIERSTRASS_F0 = Array.from({ length: WEIERSTRASS_K }, (_, k) => 0.5 ** k * Math.cos(Math.PI * 3 ** k)).reduce((a, b) => a + b, 0);

/** f16 Weierstrass: 10((1/D)Σ_i Σ_{k=0}^{11} 2^{−k} cos(2π3^k(z_i + ½)) − f0)³ + (10/D) f_pen, z = RΛ^{1/100}Q T_osz(R(x − x_opt)). */
const f16: BbobBuilder = (d, seed) => {
  const xopt = bbobXopt(d, seed), R = R_OF(d, seed);
  const M = composeDiag(R, lambdaDiag(1 / 100, d), Q_OF(d, seed), d), y = new Float64Array(d), u = new Float64Array(d), z = new Float64Array(d);
  return {
    xopt,
    raw: (x) => {
      matVec(M, toszInPlace(matVec(R, shift(x, xopt, y), d, u)), d, z);
      let s = 0;
      for (let i = 0; i < d; i++) {
        for (let k = 0, a = 1, b = 1; k < WEIERSTRASS_K; k++, a *= 0.5, b *= 3) s += a * Math.cos(2 * Math.PI * b * (z[i] + 0.5));
      }
      return 10 * (s / d - WEIERSTRASS_F0) ** 3 + (10 / d) * fpen(x);
    },
  };
};

/** f17 (α = 10) and f18 (α = 1000) Schaffers F7: ((1/(D−1)) Σ √s_i + √s_i sin²(50 s_i^{0.2}))² + 10 f_pen, s_i = √(z_i² + z_{i+1}²), z = Λ^α Q T_asy^0.5(R(x − x_opt)). */
const schaffers = (alpha: number): BbobBuilder => (d, seed) => {
  const xopt = bbobXopt(d, seed), R = R_OF(d, seed), t = ramp(d);
  const M = composeDiag(identity(d), lambdaDiag(alpha, d), Q_OF(d, seed), d); // Λ^α Q
  const y = new Float64Array(d), u = new Float64Array(d), z = new Float64Array(d);
  return {
    xopt,
    raw: (x) => {
      matVec(M, tasyInPlace(matVec(R, shift(x, xopt, y), d, u), 0.5, t), d, z);
      let s = 0;
      for (let i = 0; i < d - 1; i++) {
        const si = Math.sqrt(z[i] * z[i] + z[i + 1] * z[i + 1]);
        s += Math.sqrt(si) + Math.sqrt(si) * Math.sin(50 * si ** 0.2) ** 2;
      }
      return (s / (d - 1)) ** 2 + 10 * fpen(x);
    },
  };
};

/** f19 Composite Griewank–Rosenbrock F8F2: (10/(D−1)) Σ_{i<D} (s_i/4000 − cos s_i) + 10, s_i = 100(z_i² − z_{i+1})² + (z_i − 1)², z as in f9. */
const f19: BbobBuilder = (d, seed) => {
  const { xopt, map } = rotatedRosenbrockMap(d, seed);
  const z = new Float64Array(d);
  return {
    xopt,
    raw: (x) => {
      map(x, z);
      let s = 0;
      for (let i = 0; i < d - 1; i++) {
        const si = 100 * (z[i] * z[i] - z[i + 1]) ** 2 + (z[i] - 1) ** 2;
        s += si / 4000 - Math.cos(si);
      }
      return (10 * s) / (d - 1) + 10;
    },
  };
};

/** 418.9828872724339 = −min_z z·sin√|z| on [−500, 500], so f20's value at its optimum is 0 (up to 1e-13). */
const SCHWEFEL_SHIFT = 418.9828872724339;

/**
 * f20 Schwefel x·sin(x): −(1/(100D)) Σ z_i sin√|z_i| + 4.189828872724339 + 100 f_pen(z/100),
 * x̂ = 2·1±⊗x, ẑ_1 = x̂_1, ẑ_{i+1} = x̂_{i+1} + 0.25(x̂_i − 2|x_opt,i|), z = 100(Λ^10(ẑ − 2|x_opt|) + 2|x_opt|),
 * x_opt = 4.2096874633/2 · 1±.
 */
const f20: BbobBuilder = (d, seed) => {
  const xopt = Array.from(bbobUniform(d, seed), (u) => (u < 0.5 ? -1 : 1) * 0.5 * 4.2096874633);
  const sign = xopt.map(Math.sign), twoAbs = xopt.map((v) => 2 * Math.abs(v)), lam = lambdaDiag(10, d);
  const xh = new Float64Array(d), z = new Float64Array(d);
  return {
    xopt,
    raw: (x) => {
      for (let i = 0; i < d; i++) xh[i] = 2 * sign[i] * x[i];
      let s = 0, pen = 0;
      for (let i = 0; i < d; i++) {
        const zh = i === 0 ? xh[0] : xh[i] + 0.25 * (xh[i - 1] - twoAbs[i - 1]);
        z[i] = 100 * (lam[i] * (zh - twoAbs[i]) + twoAbs[i]);
        s += z[i] * Math.sin(Math.sqrt(Math.abs(z[i])));
        const e = Math.abs(z[i]) - 500;
        if (e > 0) pen += e * e;
      }
      return 0.01 * (SCHWEFEL_SHIFT - s / d) + 0.01 * pen;
    },
  };
};

/**
 * f21 (101 peaks) and f22 (21 peaks) Gallagher's Gaussian peaks:
 * T_osz(10 − max_i w_i exp(−(1/2D)(x − y_i)ᵀRᵀC_iR(x − y_i)))² + f_pen, R = rotation(seed).
 * w_1 = 10, w_i = 1.1 + 8(i − 2)/(n − 2); C_i = Λ^{α_i}/α_i^{1/4} with its diagonal randomly permuted,
 * α_i = 1000^{2j/(n−2)} for a random permutation j of 0…n−2, α_1 = firstAlpha; y_i uniform in
 * [−h, h]^D and y_1 (the global optimum) in [−0.8h, 0.8h]^D.
 */
const gallagher = (peaks: number, firstAlpha: number, h: number): BbobBuilder => (d, seed) => {
  const R = bbobRotation(d, seed);
  const order = argsort(bbobUniform(peaks - 1, seed));
  // C_i's diagonal as c^{p/(d−1) − ½} with c = √α_i and p a random permutation of 0…d−1.
  const sqrtAlpha = [Math.sqrt(firstAlpha), ...order.map((j) => 1000 ** (j / (peaks - 2)))];
  const weight = Array.from({ length: peaks }, (_, i) => (i === 0 ? 10 : 1.1 + (8 * (i - 1)) / (peaks - 2)));
  const scales = sqrtAlpha.map((c, i) => argsort(bbobUniform(d, seed + 1000 * i)).map((p) => c ** (p / (d - 1) - 0.5)));
  const u = bbobUniform(d * peaks, seed);
  const y = Array.from({ length: peaks }, (_, i) => Array.from({ length: d }, (_, k) => (i === 0 ? 0.8 : 1) * (2 * h * u[i * d + k] - h)));
  const ry = y.map((yi) => matVec(R, yi, d, new Float64Array(d)));
  const rx = new Float64Array(d);
  return {
    xopt: y[0],
    raw: (x) => {
      matVec(R, x, d, rx);
      let best = 0;
      for (let i = 0; i < peaks; i++) {
        let q = 0;
        const c = ry[i], s = scales[i];
        for (let k = 0; k < d; k++) q += s[k] * (rx[k] - c[k]) ** 2;
        const v = weight[i] * Math.exp((-0.5 / d) * q);
        if (v > best) best = v;
      }
      return tosz(10 - best) ** 2 + fpen(x);
    },
  };
};

/** f23 Katsuura: (10/D²) Π_i (1 + i Σ_{j=1}^{32} |2^j z_i − [2^j z_i]|/2^j)^{10/D^{1.2}} − 10/D² + f_pen, z = QΛ^100R(x − x_opt). */
const f23: BbobBuilder = (d, seed) => {
  const { xopt, z: zOf } = qLambdaR(d, seed, 100);
  const e = 10 / d ** 1.2;
  return {
    xopt,
    raw: (x) => {
      const z = zOf(x);
      let prod = 1;
      for (let i = 0; i < d; i++) {
        let s = 0;
        for (let j = 1, p = 2; j <= 32; j++, p *= 2) {
          const v = p * z[i];
          s += Math.abs(v - Math.round(v)) / p;
        }
        prod *= (1 + (i + 1) * s) ** e;
      }
      return (10 / (d * d)) * (prod - 1) + fpen(x);
    },
  };
};

/**
 * f24 Lunacek bi-Rastrigin: min(Σ(x̂_i − μ0)², dD + sΣ(x̂_i − μ1)²) + 10(D − Σcos 2πz_i) + 10⁴ f_pen,
 * x̂ = 2 sign(x_opt)⊗x, z = QΛ^100R(x̂ − μ0), μ0 = 2.5, d = 1, s = 1 − 1/(2√(D + 20) − 8.2),
 * μ1 = −√((μ0² − d)/s), x_opt = (μ0/2)·1± (signs from normals).
 */
const f24: BbobBuilder = (d, seed) => {
  const mu0 = 2.5, dd = 1, s = 1 - 1 / (2 * Math.sqrt(d + 20) - 8.2), mu1 = -Math.sqrt((mu0 * mu0 - dd) / s);
  const xopt = Array.from(bbobGauss(d, seed), (g) => (g < 0 ? -0.5 : 0.5) * mu0);
  const M = composeDiag(OUTER_Q(d, seed), lambdaDiag(100, d), INNER_R(d, seed), d), y = new Float64Array(d), z = new Float64Array(d);
  return {
    xopt,
    raw: (x) => {
      let a = 0, b = 0;
      for (let i = 0; i < d; i++) {
        const xh = 2 * Math.sign(xopt[i]) * x[i];
        a += (xh - mu0) ** 2;
        b += (xh - mu1) ** 2;
        y[i] = xh - mu0;
      }
      let c = 0;
      matVec(M, y, d, z);
      for (let i = 0; i < d; i++) c += Math.cos(2 * Math.PI * z[i]);
      return Math.min(a, dd * d + s * b) + 10 * (d - c) + 1e4 * fpen(x);
    },
  };
};

export const F15_F24: readonly BbobBuilder[] = [f15, f16, schaffers(10), schaffers(1000), f19, f20, gallagher(101, 1000, 5), gallagher(21, 1000 ** 2, 4.9), f23, f24];
