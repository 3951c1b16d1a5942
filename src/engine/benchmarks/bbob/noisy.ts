/**
 * The moderate-noise functions of COCO's BBOB noisy suite, f101–f106 (Hansen, Finck, Ros, Auger,
 * "Real-Parameter Black-Box Optimization Benchmarking 2009: Noisy Functions Definitions", INRIA
 * RR-6869): the sphere and Rosenbrock with moderate Gaussian, uniform and "seldom Cauchy" noise.
 *
 *   f101 = f_GN(f_sphere, 0.01)                      + f_pen + f_opt
 *   f102 = f_UN(f_sphere, 0.01(0.49 + 1/D), 0.01)    + f_pen + f_opt
 *   f103 = f_CN(f_sphere, 0.01, 0.05)                + f_pen + f_opt
 *   f104–f106: the same three on f_rosenbrock
 *
 * with the noise models (applied to f ≥ 0):
 *   f_GN(f, β)    = f·exp(β N(0, 1))
 *   f_UN(f, α, β) = f·U^β·max(1, (10⁹/(f + ε))^{α U'}),                       ε = 10⁻⁹⁹
 *   f_CN(f, α, p) = f + α·max(0, 1000 + 1{U < p}·N(0, 1)/(|N'(0, 1)| + ε)),   ε = 10⁻¹⁹⁹
 * each returning f itself when f < 10⁻⁸ and otherwise its value + 1.01·10⁻⁸ (RR-6869, "final function
 * value": so the final target 10⁻⁸ is reached only by the noise-free part). f_pen of the noisy suite is
 * 100·Σ max(0, |x_i| − 5)². The noise-free parts are the noiseless suite's f1 and f8 (the sphere, and
 * Rosenbrock with x_opt scaled by 0.75 and z = max(1, √D/8)(x − x_opt) + 1), drawn from the noisy
 * function's own instance seed (function number + 10000·instance, as for every BBOB function).
 *
 * The noise draws come from the project's Rng (COCO's noise is not reproducible; ours is, given the
 * noise seed and the order of evaluations). `fTrue` is the noise-free value, for scoring.
 */
import { Rng } from '../../random/index.js';
import type { BbobBuilder } from './f01-f14.js';
import { F01_F14 } from './f01-f14.js';
import { bbobFopt, bbobSeed } from './instances.js';
import { fpen } from './transforms.js';

export const NOISY_FUNCTIONS = [101, 102, 103, 104, 105, 106] as const;
export type NoisyFunction = (typeof NOISY_FUNCTIONS)[number];
export const isNoisyFunction = (fn: number): fn is NoisyFunction => (NOISY_FUNCTIONS as readonly number[]).includes(fn);

export const NOISY_NAMES: Readonly<Record<NoisyFunction, string>> = {
  101: 'Sphere, moderate Gaussian noise', 102: 'Sphere, moderate uniform noise', 103: 'Sphere, moderate seldom Cauchy noise',
  104: 'Rosenbrock, moderate Gaussian noise', 105: 'Rosenbrock, moderate uniform noise', 106: 'Rosenbrock, moderate seldom Cauchy noise',
};

/** Below this noise-free value the noise models return f undisturbed. */
const NOISE_THRESHOLD = 1e-8;
const FINAL_OFFSET = 1.01e-8;

/** RR-6869's final rule: f itself below 10⁻⁸, otherwise the noisy value + 1.01·10⁻⁸. */
function finalValue(f: number, noisy: () => number): number {
  return f < NOISE_THRESHOLD ? f : noisy() + FINAL_OFFSET;
}

/** f_GN(f, β) = f·exp(β N(0, 1)): log-normal, multiplicative, scale invariant. */
export function gaussianNoise(f: number, beta: number, rng: Rng): number {
  return finalValue(f, () => f * Math.exp(beta * rng.normal()));
}

/** f_UN(f, α, β) = f·U^β·max(1, (10⁹/(f + ε))^{α U'}), ε = 10⁻⁹⁹; stronger as f approaches 0. */
export function uniformNoise(f: number, alpha: number, beta: number, rng: Rng): number {
  return finalValue(f, () => {
    const u1 = rng.uniform(), u2 = rng.uniform();
    return f * u1 ** beta * Math.max(1, (1e9 / (f + 1e-99)) ** (alpha * u2));
  });
}

/**
 * f_CN(f, α, p) = f + α·max(0, 1000 + 1{U < p}·N/(|N'| + ε)), ε = 10⁻¹⁹⁹: an offset of 1000α and, with
 * probability p, a Cauchy-distributed outlier (the ratio of two independent normals), cut from below.
 */
export function cauchyNoise(f: number, alpha: number, p: number, rng: Rng): number {
  return finalValue(f, () => {
    const outlier = rng.uniform() < p ? rng.normal() / (Math.abs(rng.normal()) + 1e-199) : 0;
    return f + alpha * Math.max(0, 1000 + outlier);
  });
}

/**
 * The standard deviation of the noisy value at a noise-free value f ≥ 0 (what a user who measured
 * replicates would report as the value's standard error), from the noise models' moments:
 * Gaussian: f·√(e^{β²}(e^{β²} − 1)) (log-normal); uniform: √(m₂ − m₁²) with
 * m_k = f^k·E[U^{kβ}]·E[e^{kαL U'}] = f^k/(1 + kβ)·(e^{kαL} − 1)/(kαL), L = ln(10⁹/(f + ε)) > 0
 * (for f ≥ 10⁹ the second factor is 1: m_k = f^k/(1 + kβ)); Cauchy: undefined (the outliers have no
 * variance), null. 0 below 10⁻⁸, where the value is noise-free.
 */
export function noiseStd(fn: NoisyFunction, f: number, d: number): number | null {
  const kind = (fn - 101) % 3;
  if (kind === 2) return null;
  if (f < NOISE_THRESHOLD) return 0;
  if (kind === 0) {
    const e = Math.exp(0.01 ** 2);
    return f * Math.sqrt(e * (e - 1));
  }
  const alpha = 0.01 * (0.49 + 1 / d), beta = 0.01;
  const L = Math.log(1e9 / (f + 1e-99));
  const moment = (k: number): number => (f ** k / (1 + k * beta)) * (L > 0 ? Math.expm1(k * alpha * L) / (k * alpha * L) : 1);
  return Math.sqrt(Math.max(0, moment(2) - moment(1) ** 2));
}

/**
 * The value the noisy objective is centred on at a noise-free value f ≥ 0 (f_opt and f_pen apart): its
 * mean for the Gaussian and uniform models (m₁ of noiseStd, + 1.01·10⁻⁸), and for the Cauchy model,
 * whose mean does not exist, its median f + 1000α + 1.01·10⁻⁸ (the undisturbed draw, probability
 * 1 − p > ½). f itself below 10⁻⁸. This is what a model of the observations can estimate.
 */
export function noiseCentre(fn: NoisyFunction, f: number, d: number): number {
  if (f < NOISE_THRESHOLD) return f;
  const kind = (fn - 101) % 3;
  if (kind === 0) return f * Math.exp(0.01 ** 2 / 2) + FINAL_OFFSET;
  if (kind === 2) return f + 0.01 * 1000 + FINAL_OFFSET;
  const alpha = 0.01 * (0.49 + 1 / d), beta = 0.01;
  const L = Math.log(1e9 / (f + 1e-99));
  return (f / (1 + beta)) * (L > 0 ? Math.expm1(alpha * L) / (alpha * L) : 1) + FINAL_OFFSET;
}

/** One noisy instance: `f` draws fresh noise at every call, `fTrue` is the noise-free value (f_opt included). */
export interface NoisyParts {
  xopt: number[];
  fopt: number;
  f(x: ArrayLike<number>): number;
  fTrue(x: ArrayLike<number>): number;
  /** The noise's standard deviation at x (noiseStd), or null for the Cauchy model. */
  noiseStd(x: ArrayLike<number>): number | null;
  /** The value the noisy f is centred on at x (noiseCentre, with f_pen and f_opt). */
  fCentre(x: ArrayLike<number>): number;
}

export function noisyParts(fn: NoisyFunction, d: number, instance: number, noiseSeed: number): NoisyParts {
  const seed = bbobSeed(fn, instance);
  const fopt = bbobFopt(fn, instance);
  const builder: BbobBuilder = fn <= 103 ? F01_F14[0] : F01_F14[7];
  const { xopt, raw } = builder(d, seed);
  const rng = Rng.fromSeed(noiseSeed);
  const kind = (fn - 101) % 3;
  const noise = (f: number): number =>
    kind === 0 ? gaussianNoise(f, 0.01, rng) : kind === 1 ? uniformNoise(f, 0.01 * (0.49 + 1 / d), 0.01, rng) : cauchyNoise(f, 0.01, 0.05, rng);
  return {
    xopt,
    fopt,
    f: (x) => noise(raw(x)) + 100 * fpen(x) + fopt,
    fTrue: (x) => raw(x) + 100 * fpen(x) + fopt,
    noiseStd: (x) => noiseStd(fn, raw(x), d),
    fCentre: (x) => noiseCentre(fn, raw(x), d) + 100 * fpen(x) + fopt,
  };
}
