/**
 * A UCI surrogate task (the paper's §5.2 "semi-supervised" experiment, appendix "UCI Experiments"):
 * a regression data set turned into an optimisation problem.
 *
 *   1. The inputs are standardised, z = (x − x̄)/s_x per column (population std, as scikit-learn's
 *      StandardScaler), and so is the target, t = (y − ȳ)/s_y.
 *   2. An ε-SVR with RBF kernel (svr.ts, libsvm) is fitted to (z, t). Hyperparameters, which the paper
 *      does not state: scikit-learn SVR's defaults, C = 1, ε = 0.1 (on the standardised target) and
 *      γ = "scale" = 1/(d·Var(z)) = 1/d.
 *   3. The prior is fitted to the standardised inputs by the service's own data-informed prior: the
 *      rows go in as `prior: {from_points}` of a study create request (parsed by the service's own
 *      schema) with one unbounded float parameter per column
 *      (domain/studies/prior-sources.ts: mean and OAS-shrunk covariance), then through the study
 *      checks and the effective prior, and the methods search in the study's whitened coordinates
 *      u (domain/studies/transforms.ts: z = m0 + L0·u, L0 the Cholesky factor), exactly as a study would.
 *      The paper fits "a multivariate distribution on the data" and starts from N(0, I) on the
 *      standardised data; the fitted prior is that with the inputs' correlations kept.
 *   4. The objective, maximised, is the surrogate's prediction in target units, ȳ + s_y·SVR(z).
 *
 * BO/πBO get no box, as a study with a full-covariance prior gives them none: their search box is
 * the prior mean ± box_std (3) prior standard deviations in u.
 */
import { resolveFromPoints } from '../../src/domain/studies/prior-sources.js';
import { CreateStudyRequest } from '../../src/domain/studies/study-request.js';
import { checkStudySpec, effectivePrior, type EffectivePrior, type StudySpecInput } from '../../src/domain/studies/study-spec.js';
import { searchSpace, toUserRaw, type SearchSpace } from '../../src/domain/studies/transforms.js';
import { fitSvr, type Svr, type SvrParams } from './svr.js';
import { loadUciData, type UciData } from './uci-data.js';

export interface UciTask {
  data: UciData;
  dim: number;
  /** Standardised inputs, rows × columns. */
  z: number[][];
  xMean: number[];
  xStd: number[];
  yMean: number;
  yStd: number;
  svr: Svr;
  /** The study's effective prior over z (with its source: points and shrinkage). */
  prior: EffectivePrior;
  space: SearchSpace;
  /** The surrogate in target units at a standardised input z. */
  surrogate(z: readonly number[]): number;
  /** The surrogate at internal coordinates u (z = m0 + L0·u). */
  atInternal(u: readonly number[]): number;
}

function columnStats(rows: readonly number[][]): { mean: number[]; std: number[] } {
  const n = rows.length, d = rows[0].length;
  const mean = Array.from({ length: d }, (_, j) => rows.reduce((a, r) => a + r[j], 0) / n);
  const std = Array.from({ length: d }, (_, j) => Math.sqrt(rows.reduce((a, r) => a + (r[j] - mean[j]) ** 2, 0) / n));
  if (std.some((s) => !(s > 0))) throw new Error('a column is constant: it cannot be standardised');
  return { mean, std };
}

/** The rule of step 2: scikit-learn SVR's defaults on standardised data. */
export function defaultSvrParams(dim: number): SvrParams {
  return { C: 1, epsilon: 0.1, gamma: 1 / dim };
}

export async function buildUciTask(name: string, svrParams?: SvrParams): Promise<UciTask> {
  const data = loadUciData(name);
  const d = data.columns.length;
  const xs = columnStats(data.X);
  const ys = columnStats(data.y.map((v) => [v]));
  const z = data.X.map((r) => r.map((v, j) => (v - xs.mean[j]) / xs.std[j]));
  const t = data.y.map((v) => (v - ys.mean[0]) / ys.std[0]);
  const svr = await fitSvr(z, t, svrParams ?? defaultSvrParams(d));

  // The create request a client would send, through the service's own schema.
  const request = CreateStudyRequest.parse({
    name: `uci-${name}`,
    direction: 'maximize',
    parameters: data.columns.map((c) => ({ name: c, type: 'float', scale: 'linear' })),
    prior: { from_points: z.map((row) => Object.fromEntries(data.columns.map((c, j) => [c, row[j]]))) },
    method: 'prob-cmaes',
    batch_size: 3,
  });
  const fitted = resolveFromPoints(request, request.prior!.from_points!, undefined);
  const spec: StudySpecInput = { ...request, prior: fitted.prior };
  checkStudySpec(spec);
  const eff = effectivePrior(spec);
  const prior: EffectivePrior = { ...eff.prior, source: fitted.source };
  const space = searchSpace(eff.parameters, prior);
  const surrogate = (zq: readonly number[]): number => ys.mean[0] + ys.std[0] * svr.predict(zq);
  return {
    data, dim: d, z, xMean: xs.mean, xStd: xs.std, yMean: ys.mean[0], yStd: ys.std[0], svr, prior, space,
    surrogate,
    // Every parameter of this task is numeric, so its user-unit values are numbers.
    atInternal: (u) => surrogate(toUserRaw(space, u) as number[]),
  };
}
