/** Query and response schemas of the model views (/model/grid, /model/importance). */
import { z } from 'zod';
import { GRID_DEFAULT_N, GRID_MAX_N } from '../../domain/index.js';

const Generation = z.coerce
  .number()
  .int()
  .min(0)
  .optional()
  .describe('The generation whose model is shown (default: the latest). Each generation has the search distribution and model it had then.');

export const GridQuery = z
  .object({
    x: z.string().min(1).max(128).describe('Name of the numeric parameter on the horizontal axis.'),
    y: z.string().min(1).max(128).describe('Name of the numeric parameter on the vertical axis (not x).'),
    n: z.coerce.number().int().min(2).max(GRID_MAX_N).default(GRID_DEFAULT_N).describe(`Grid points per axis (at most ${GRID_MAX_N}: ${GRID_MAX_N ** 2} predictions).`),
    generation: Generation,
  })
  .strict();

export const ImportanceQuery = z.object({ generation: Generation }).strict();

const Source = z
  .enum(['method', 'fitted'])
  .describe('"method": the GP the method itself fitted in that generation (prob-cmaes, prob-xnes, prob-snes; bo, pibo); "fitted": a GP fitted for this view to the points completed by then (methods without a model, and generations before a method\'s first fit).');

const Axis = z.object({
  name: z.string(),
  scale: z.enum(['linear', 'log']),
  step: z.number().nullable().describe('The parameter\'s step (its values are low + k·step; 1 for an int), null for a continuous float. The model is continuous: `values` are not restricted to the grid.'),
  values: z.array(z.number()).describe('Grid values in user units, evenly spaced in the parameter\'s scale (ln of the value for log-scaled parameters), spanning the search distribution\'s ±3σ and the evaluated points, within the bounds.'),
});

export const GridSchema = z
  .object({
    generation: z.int(),
    source: Source,
    n_points: z.int().describe('Training points of the GP.'),
    x: Axis,
    y: Axis,
    mean: z.array(z.array(z.number())).describe('Posterior mean of the objective in the study\'s units, mean[iy][ix].'),
    std: z.array(z.array(z.number())).describe('Posterior standard deviation of the objective (the GP\'s latent std, without observation noise; for a GP with a quadratic mean, without the uncertainty of its coefficients), std[iy][ix].'),
    fixed: z.record(z.string(), z.union([z.number(), z.string(), z.boolean()])).describe('Where the other parameters are held: the search distribution\'s mean (a categorical parameter at its most probable choice).'),
    distribution: z.object({
      mean: z.array(z.number()).length(2).describe('The search distribution\'s mean of (x, y), user units.'),
      ellipses: z
        .array(z.object({ sigma: z.number(), points: z.array(z.array(z.number()).length(2)) }))
        .describe('The 1σ and 2σ ellipses of its (x, y) marginal (Gaussian in the parameters\' scale), as closed polygons in user units.'),
    }),
    points: z
      .array(z.object({ trial_id: z.int(), x: z.number(), y: z.number(), value: z.number(), generation: z.int(), in_model: z.boolean().describe('Whether the GP shown was conditioned on this point.') }))
      .describe('Every COMPLETED trial.'),
  })
  .meta({ id: 'ModelGrid' });

export const ImportanceSchema = z
  .object({
    generation: z.int(),
    source: Source,
    n_points: z.int(),
    uncertainty: z
      .enum(['joint', 'conditional'])
      .nullable()
      .describe('How the intervals were obtained: the Laplace approximation of the hyperparameter posterior ("joint"; "conditional" when its Hessian is not positive definite and the other hyperparameters are held fixed), or null when neither exists.'),
    parameters: z.array(
      z.object({
        name: z.string(),
        scale: z.enum(['linear', 'log']),
        lengthscale: z.number().describe('The GP kernel\'s length scale along this parameter, in its scale (units of the value, or of ln value for log-scaled parameters): the distance over which the objective changes appreciably.'),
        lengthscale_interval: z.array(z.number()).length(2).nullable().describe('95% interval from the Laplace approximation; null when unavailable.'),
        relevance: z.number().describe('Prior std of the parameter / its length scale: how much the objective varies across the prior\'s range; comparable across parameters.'),
        relevance_interval: z.array(z.number()).length(2).nullable(),
      }),
    ),
  })
  .meta({ id: 'ModelImportance' });
