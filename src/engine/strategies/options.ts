/**
 * Study options as plain data: the kinds an option may have, and the options several strategies
 * share (the three ProbNES methods; BO and πBO). Each strategy's descriptor (registry.ts) names the
 * options it accepts and their defaults; the HTTP layer builds its zod schemas from them (unknown
 * options are rejected there), and `resolveOptions` fills in the defaults, which for the ProbNES
 * methods depend on `profile` (ALGORITHM.md §1 "Two profiles", §4, §5).
 */

export type OptionSpec =
  | { kind: 'number'; min: number; max: number; exclusiveMin?: boolean; integer?: boolean; description: string }
  | { kind: 'enum'; values: readonly string[]; description: string }
  | { kind: 'boolean'; description: string };

export type OptionValue = number | string | boolean;
export type Options = Record<string, OptionValue>;
export type OptionSpecs = Readonly<Record<string, OptionSpec>>;

const profile: OptionSpec = { kind: 'enum', values: ['default', 'paper'], description: '`default` (ours: warm-started GP fit, distribution mean inside each batch, natural SNES form, a quadratic GP mean with an active-set floor, a model-based mean step, a covariance step limit and the model\'s optimum as a batch point once the mean is quadratic, the mean kept inside the bounds) or `paper` (the published algorithm).' };
export const etaMean: OptionSpec = { kind: 'number', min: 0, max: 10, exclusiveMin: true, description: 'η_μ, step size of the mean update.' };
export const etaCov: OptionSpec = { kind: 'number', min: 0, max: 10, exclusiveMin: true, description: 'η_Σ, step size of the covariance update.' };

/** The options of the three ProbNES methods (prob-snes adds `snes_form`). */
export const PROBNES_OPTIONS: OptionSpecs = {
  profile,
  learning_rate_mean: etaMean,
  learning_rate_cov: etaCov,
  gradient: { kind: 'enum', values: ['expected', 'sampled'], description: 'BQ expected gradient (closed form) or a gradient sampled from the GP posterior (ablation).' },
  gradient_samples: { kind: 'number', min: 10, max: 100_000, integer: true, description: 'Points drawn from ν for the sampled gradient.' },
  acquisition: { kind: 'enum', values: ['batch-bq', 'none'], description: 'Batch Bayesian-quadrature variance reduction, or plain samples from ν.' },
  candidates: { kind: 'number', min: 1, max: 100_000, integer: true, description: 'Candidate batches drawn from ν for batch BQ.' },
  candidate_pool: { kind: 'number', min: 0, max: 100_000, integer: true, description: 'When > 0, batch BQ forms its batch from this many points drawn from ν (one kernel solve per point, see pool_selection) instead of scoring `candidates` batches of fresh draws; 0 = the paper\'s fresh batches.' },
  pool_selection: { kind: 'enum', values: ['greedy', 'random-batches'], description: 'With candidate_pool > 0: build the batch greedily (each point maximises the variance reduction given the ones before), or take the best of `candidates` random batches of pool points.' },
  active_set: { kind: 'boolean', description: 'Fit the GP on the points inside the χ² ellipsoid of ν only (true) or on all points (false).' },
  active_set_quantile: { kind: 'number', min: 0.5, max: 1, exclusiveMin: true, description: 'χ²_d quantile that bounds the active set (squared Mahalanobis distance).' },
  active_set_cap: { kind: 'number', min: 0, max: 100_000, integer: true, description: 'Most points in the active set (the nearest to μ in Σ⁻¹ distance are kept), which bounds the GP fit\'s cost per generation as the study grows; 0 = no cap (the paper).' },
  include_mean: { kind: 'boolean', description: 'Evaluate the distribution mean μ as one point of every batch.' },
  gp_warm_start: { kind: 'boolean', description: 'Also start the GP fit from the previous generation\'s MAP hyperparameters and keep the better.' },
  gp_restarts: { kind: 'number', min: 0, max: 20, integer: true, description: 'Extra GP fit restarts from prior draws (beyond the default and warm starts).' },
  gp_cold_start_every: { kind: 'number', min: 0, max: 1000, integer: true, description: 'With a warm start, the GP fit also starts from the default hyperparameters in every k-th generation only (1 = every generation, 0 = only when there is no warm start); the warm start alone needs about a third of the evaluations.' },
  mean_function: { kind: 'enum', values: ['constant', 'quadratic'], description: 'GP mean: a learned constant, or explicit basis functions (the richest of constant, linear, diagonal and full quadratic with at least 1.5 points per coefficient), fitted by generalised least squares under the restricted likelihood.' },
  mean_basis: { kind: 'enum', values: ['count', 'loo', 'loo-constant', 'loo-gated'], description: 'With mean_function quadratic: the richest basis with at least 1.5 points per coefficient (count); or, among those, the poorest whose GP predicts the points from one another (leave-one-out log likelihood) within mean_basis_se standard errors of the best (loo: every such basis; loo-constant: the richest one and the constant mean only; loo-gated: as loo-constant, but the constant mean competes only while the search distribution is wide (mean_basis_wide), the objective varies within it (mean_basis_scale) and the basis explains little of it (mean_basis_r2)). Each candidate costs one GP fit.' },
  mean_basis_wide: { kind: 'number', min: 0, max: 100, description: 'With mean_basis loo-gated: τ, the constant mean competes only while the largest marginal standard deviation of the search distribution is at least τ prior standard deviations.' },
  mean_basis_scale: { kind: 'number', min: 0, max: 100, description: 'With mean_basis loo-gated: κ, the constant mean competes only while some length scale of the residual GP is below κ marginal standard deviations of the search distribution (the objective varies within it).' },
  mean_basis_r2: { kind: 'number', min: 0, max: 1, description: 'With mean_basis loo-gated: ρ, the constant mean competes only while the basis explains less than ρ of the targets\' variance (R² of the basis part on the active set).' },
  mean_basis_se: { kind: 'number', min: 0, max: 10, description: 'With mean_basis loo, loo-constant or loo-gated: k of the k-standard-error rule (the standard error of the sum of the pointwise leave-one-out differences to the best basis); 0 = the best score.' },
  active_set_floor: { kind: 'boolean', description: 'Top the active set up with the nearest points to ⌈1.5·p⌉, p the size of the full quadratic basis, so the quadratic mean stays usable as Σ shrinks.' },
  mean_step: { kind: 'enum', values: ['natural', 'line', 'newton', 'cauchy', 'newton-cauchy'], description: 'Mean step once the GP mean is quadratic: the natural-gradient step Σg_μ, the best step along it under the model, the model\'s Newton step (the natural step where the model is not concave), the trust-region Cauchy point (the best step along Σg_μ, to the trust region\'s boundary when the model is not concave along it), or the Newton step where the model is concave and the Cauchy point elsewhere; all but the first stay within trust_radius.' },
  mean_step_free: { kind: 'boolean', description: 'With mean_in_bounds: coordinates of the mean that sit on a bound the step pushes against are held there and the step is taken in the others (projected gradient), instead of stepping in all and projecting.' },
  mean_step_linear: { kind: 'boolean', description: 'In generations whose GP mean is linear, step along Σg_μ to trust_radius (the model has no curvature to stop it; with mean_in_bounds the bounds do).' },
  trust_radius: { kind: 'number', min: 0, max: 100, exclusiveMin: true, description: 'Largest mean step of every mean_step but natural (and of mean_step_linear), in Mahalanobis units of the current search distribution.' },
  cov_step_limit: { kind: 'number', min: 0, max: 100, exclusiveMin: true, description: 'Once the GP mean is quadratic: the largest |eigenvalue| of the whitened covariance step 2η_Σ L_Σᵀ G L_Σ (G is scaled down to it).' },
  mean_in_bounds: { kind: 'boolean', description: 'Keep the distribution mean inside the parameter bounds (projected after each update; unbounded parameters are not limited).' },
  cov_in_bounds: { kind: 'boolean', description: 'Keep each marginal standard deviation of the search distribution at most the width of its parameter\'s bounds (Σ scaled as DΣD, correlations kept; unbounded parameters are not limited): a wider distribution only yields points projected onto the bounds.' },
  inject_optimum: { kind: 'enum', values: ['off', 'basis', 'weighted'], description: 'Once the GP mean is quadratic, evaluate a model optimum within optimum_radius of the search distribution as one point of each batch that keeps at least one batch-BQ point besides the mean: the maximiser of the GP\'s basis quadratic, or of lq-CMA-ES\'s rank-weighted least-squares quadratic on the recent points (as lq-CMA-ES evaluates its model\'s optimum).' },
  optimum_gate: { kind: 'enum', values: ['basis', 'count'], description: 'With inject_optimum: when the model\'s optimum is evaluated: once the GP mean\'s basis is diagonal or full quadratic (basis), or once the active set has enough points for that basis by the count rule, whatever basis mean_basis chose for the GP mean (count; with inject_optimum basis the GP\'s own quadratic is still needed).' },
  optimum_radius: { kind: 'number', min: 0, max: 100, exclusiveMin: true, description: 'With inject_optimum: the trust region of the model\'s optimum, in Mahalanobis units of the search distribution.' },
  optimum_radius_max: { kind: 'number', min: 0, max: 100, description: 'With inject_optimum: above optimum_radius, the trust radius of the model\'s optimum adapts: it doubles, up to this value, after a generation whose model optimum was better than every value observed before it, and halves back toward optimum_radius otherwise (0 or at most optimum_radius: fixed at optimum_radius).' },
  learning_rate_cov_quadratic: { kind: 'number', min: 0, max: 10, exclusiveMin: true, description: 'η_Σ in generations whose GP mean has quadratic terms (learning_rate_cov otherwise).' },
};

/** ProbNES defaults for a profile (ALGORITHM.md §1, §4, §5); η_Σ is the method's own. */
export function probnesDefaults(profileName: string, learningRateCov: number): Options {
  const paper = profileName === 'paper';
  return {
    profile: paper ? 'paper' : 'default',
    learning_rate_mean: 1,
    learning_rate_cov: learningRateCov,
    gradient: 'expected',
    gradient_samples: 1000,
    acquisition: 'batch-bq',
    candidates: 1000,
    candidate_pool: paper ? 0 : 200,
    pool_selection: 'random-batches',
    active_set: true,
    active_set_quantile: 0.9973,
    active_set_cap: paper ? 0 : 50,
    include_mean: !paper,
    gp_warm_start: !paper,
    gp_restarts: 0,
    gp_cold_start_every: 1,
    // docs/ALGORITHM-default.md §A–§F; inert in the paper profile (the mean stays constant).
    mean_function: paper ? 'constant' : 'quadratic',
    mean_basis: 'count',
    mean_basis_se: 2,
    mean_basis_wide: 0.3,
    mean_basis_scale: 1,
    mean_basis_r2: 0.9,
    active_set_floor: !paper,
    mean_step: paper ? 'natural' : 'line',
    trust_radius: 2,
    cov_step_limit: 3,
    learning_rate_cov_quadratic: paper ? learningRateCov : 1,
    mean_in_bounds: !paper,
    cov_in_bounds: !paper,
    mean_step_linear: false,
    mean_step_free: !paper,
    inject_optimum: paper ? 'off' : 'weighted',
    optimum_radius: 2,
    optimum_gate: 'basis',
  };
}

/** The options of BO (πBO adds `beta`). */
export const BO_OPTIONS: OptionSpecs = {
  candidates: { kind: 'number', min: 10, max: 100_000, integer: true, description: 'Random candidates scored by the acquisition before local refinement.' },
  mc_samples: { kind: 'number', min: 16, max: 4096, integer: true, description: 'Monte Carlo samples for batch expected improvement (q-EI).' },
  box_std: { kind: 'number', min: 0, max: 20, exclusiveMin: true, description: 'Half-width of the search box in prior standard deviations when a parameter has no bounds.' },
};

export const BO_DEFAULTS: Readonly<Options> = { candidates: 2000, mc_samples: 256, box_std: 3 };
