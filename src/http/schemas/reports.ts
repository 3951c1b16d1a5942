/** Response schemas of /best, /history and /distribution (docs/API.md "Best and history"). */
import { z } from 'zod';
import { FRONT_LIMITS, HISTORY_LIMITS } from '../../domain/index.js';
import { TrialSchema } from './trial.js';
import { ParameterValueSchema } from '../../domain/index.js';

/** Values in user units by parameter name; a categorical parameter's is one of its choices. */
const Named = z.record(z.string(), ParameterValueSchema);

export const BestSchema = z
  .object({
    observed: z
      .object({ trial_id: z.int(), parameters: Named, value: z.number() })
      .nullable()
      .describe('The best COMPLETED trial in the study\'s direction (the first one on ties); null before any result.'),
    estimated: z
      .object({
        parameters: Named.describe('The point the method recommends, rounded and projected onto the bounds like a suggested point: the search distribution\'s centre (its mean and each categorical parameter\'s most likely choice; after a ProbNES search restarted from the prior, the centre it had converged to until the restarted search finds a better value); for bo and pibo, which have no search distribution, the evaluated configuration their model predicts best.'),
        predicted_value: z.number().nullable().describe('The model\'s prediction of the value there; null when the method has no model (or none fitted yet).'),
        predicted_std: z.number().nullable().describe('Standard deviation of that prediction (latent, without observation noise).'),
      })
      .describe('Where the search is heading.'),
    front: z
      .object({ size: z.int(), hypervolume: z.number() })
      .nullable()
      .describe('A study of several objectives has no single best (observed is null): its Pareto front\'s size and hypervolume; GET …/front lists it. Null for one objective.'),
  })
  .meta({
    examples: [
      {
        observed: { trial_id: 31, parameters: { log_lr: -3.1, width: 256 }, value: 0.412 },
        estimated: { parameters: { log_lr: -3.05, width: 241 }, predicted_value: 0.405, predicted_std: 0.021 },
        front: null,
      },
    ],
  });

/** GET /history's pages (docs/capacity.md "History in pages"). */
export const HistoryQuery = z.object({
  page_size: z.coerce
    .number()
    .int()
    .min(1)
    .max(HISTORY_LIMITS.maxPageSize)
    .default(HISTORY_LIMITS.defaultPageSize)
    .describe(`Evaluations per page (1–${HISTORY_LIMITS.maxPageSize}, default ${HISTORY_LIMITS.defaultPageSize}); a page also carries up to ${HISTORY_LIMITS.generationsPerPage} generations.`),
  page_token: z.string().min(1).max(4096).optional().describe('The `next_page_token` of the previous page (valid for the same study and stride).'),
  stride: z.coerce
    .number()
    .int()
    .min(1)
    .max(HISTORY_LIMITS.maxStride)
    .default(1)
    .describe('Downsampling: every stride-th evaluation (index 1, 1 + stride, …), plus every evaluation that improved the best so far and the latest one, so best_so_far and regret stay exact; 1 = every evaluation.'),
});

export const HistorySchema = z
  .object({
    known_optimum: z.number().nullable(),
    evaluation_count: z.int().describe('All COMPLETED trials with a value, not only this page\'s.'),
    next_page_token: z.string().nullable().describe('Pass as page_token for the next page (more evaluations or generations); null on the last page.'),
    evaluations: z
      .array(
        z.object({
          index: z.int().describe('1-based: the number of evaluations so far.'),
          trial_id: z.int(),
          value: z.number(),
          best_so_far: z.number(),
          regret: z.number().nullable().describe('best_so_far − known_optimum (known_optimum − best_so_far when maximising); null without known_optimum.'),
        }),
      )
      .describe('COMPLETED trials in completion order (trial id order among those completed together).'),
    generations: z
      .array(
        z.object({
          generation: z.int(),
          mean: Named.describe('Distribution mean in user units (exp of the transformed mean for log-scaled parameters; not rounded or projected); for a categorical parameter its most probable choice.'),
          std: z.array(z.number()).describe('Per numeric parameter, in parameter order (categorical ones skipped), in the parameter\'s transformed scale (ln(value) for log-scaled ones): √diag(L0 Σ L0ᵀ).'),
          integral_mean: z.number().nullable().describe('ProbNES: Bayesian-quadrature posterior mean of E_ν[value], the expected value under the search distribution.'),
          integral_std: z.number().nullable().describe('Its posterior standard deviation.'),
          n_active: z.int().nullable().describe('ProbNES: points in the active set the GP was fitted on.'),
        }),
      )
      .describe('One entry per generation, from the stored engine state of that generation.'),
  })
  .meta({
    examples: [
      {
        known_optimum: 0,
        evaluation_count: 3,
        next_page_token: null,
        evaluations: [
          { index: 1, trial_id: 1, value: 2.5, best_so_far: 2.5, regret: 2.5 },
          { index: 2, trial_id: 2, value: 3.1, best_so_far: 2.5, regret: 2.5 },
          { index: 3, trial_id: 3, value: 0.7, best_so_far: 0.7, regret: 0.7 },
        ],
        generations: [{ generation: 0, mean: { log_lr: -3, width: 128 }, std: [1, 0.5], integral_mean: null, integral_std: null, n_active: null }],
      },
    ],
  });

export const DistributionSchema = z
  .object({
    generation: z.int(),
    mean: Named.describe('The mean in user units (exp of mean_transformed for log-scaled parameters; not rounded or projected); for a categorical parameter its most probable choice.'),
    mean_transformed: z.array(z.number()).describe('The mean in each numeric parameter\'s transformed scale (x, or ln x), in parameter order (categorical parameters skipped).'),
    covariance: z.array(z.array(z.number())).describe('Covariance in the transformed scale, over the numeric parameters in parameter order: L0 Σ L0ᵀ.'),
    std: z.array(z.number()).describe('√diag(covariance), per numeric parameter.'),
    scale: z.array(z.enum(['linear', 'log'])).describe('Each numeric parameter\'s scale: what "transformed" means for it.'),
    probabilities: z
      .record(z.string(), z.array(z.number()))
      .describe('Per categorical parameter, the search distribution\'s probabilities of its choices (in the order of `choices`); {} without categorical parameters.'),
  })
  .meta({
    examples: [
      {
        generation: 4,
        mean: { log_lr: -3.05, width: 241.2 },
        mean_transformed: [-3.05, 5.4856],
        covariance: [[0.25, 0.01], [0.01, 0.09]],
        std: [0.5, 0.3],
        scale: ['linear', 'log'],
        probabilities: {},
      },
    ],
  });

/** GET …/front and …/front/history pages. */
export const FrontQuery = z.object({
  page_size: z.coerce
    .number()
    .int()
    .min(1)
    .max(FRONT_LIMITS.maxPageSize)
    .default(FRONT_LIMITS.defaultPageSize)
    .describe(`Items per page (1–${FRONT_LIMITS.maxPageSize}, default ${FRONT_LIMITS.defaultPageSize}).`),
  page_token: z.string().min(1).max(4096).optional().describe('The `next_page_token` of the previous page (valid for the same study and route).'),
});

const ReferencePointSchema = z
  .object({
    value: z.array(z.number()).describe('In the objectives\' own units, in their order.'),
    derived: z.boolean().describe('Derived from the front (nadir + 0.1·(nadir − ideal)) because the study declares none; it moves as the front does.'),
  })
  .nullable()
  .describe('The hypervolume\'s reference point; null while there is no feasible result and none is declared.');

export const FrontSchema = z
  .object({
    objectives: z.array(z.object({ name: z.string(), direction: z.enum(['minimize', 'maximize']) })),
    reference_point: ReferencePointSchema,
    hypervolume: z.number().describe('Of the whole front (not only this page) against reference_point: the measure of the objective space it dominates up to that point.'),
    front_size: z.int(),
    evaluation_count: z.int().describe('COMPLETED trials with a result (infeasible ones included).'),
    feasible_count: z.int(),
    trials: z.array(TrialSchema).describe('The non-dominated feasible trials, sorted by the first objective\'s loss.'),
    next_page_token: z.string().nullable(),
  })
  .meta({
    examples: [
      {
        objectives: [
          { name: 'error', direction: 'minimize' },
          { name: 'fit_seconds', direction: 'minimize' },
        ],
        reference_point: { value: [0.5, 30], derived: false },
        hypervolume: 9.8,
        front_size: 1,
        evaluation_count: 40,
        feasible_count: 37,
        trials: [],
        next_page_token: null,
      },
    ],
  });

export const FrontHistorySchema = z
  .object({
    reference_point: ReferencePointSchema,
    points: z
      .array(
        z.object({
          index: z.int().describe('1-based: results so far (infeasible ones included), in completion order.'),
          trial_id: z.int(),
          hypervolume: z.number().describe('Of the front of the feasible results so far, against reference_point (the same for every point, so the curve never falls).'),
          front_size: z.int(),
        }),
      )
      .describe('One point per COMPLETED trial with a result, in completion order.'),
    next_page_token: z.string().nullable(),
  })
  .meta({ examples: [{ reference_point: { value: [0.5, 30], derived: false }, points: [{ index: 1, trial_id: 1, hypervolume: 2.1, front_size: 1 }], next_page_token: null }] });
