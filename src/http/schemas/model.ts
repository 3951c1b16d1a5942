/** Query and response schemas of the model views (/model/grid, /model/importance). */
import { z } from 'zod';
import { GRID_DEFAULT_N, GRID_MAX_N } from '../../domain/index.js';

const Generation = z.coerce
  .number()
  .int()
  .min(0)
  .optional()
  .describe('The generation whose model is shown (default: the latest). Each generation has the search distribution and model it had then.');

const Objective = z
  .string()
  .min(1)
  .max(128)
  .optional()
  .describe('The objective whose model is shown, by name (default: the first declared; `value` for a study that declares none). With several objectives the view fits a GP to that objective\'s values (source "fitted"). A name that is not one of the study\'s objectives is a 400 at /objective.');

export const GridQuery = z
  .object({
    x: z.string().min(1).max(128).describe('Name of the numeric parameter on the horizontal axis.'),
    y: z.string().min(1).max(128).describe('Name of the numeric parameter on the vertical axis (not x).'),
    n: z.coerce.number().int().min(2).max(GRID_MAX_N).default(GRID_DEFAULT_N).describe(`Grid points per axis (at most ${GRID_MAX_N}: ${GRID_MAX_N ** 2} predictions).`),
    generation: Generation,
    objective: Objective,
    fixed: z
      .string()
      .max(20000)
      .optional()
      .meta({ example: '{"kernel": "rbf"}' })
      .describe('A JSON object (URL-encoded) naming categorical parameters and the choice to hold each at: the grid is the model conditioned on those choices, e.g. {"kernel": "rbf"}. Choices match by value and JSON type ("1" and 1 differ). A categorical parameter it does not name is held at its most probable choice. An unknown parameter, a numeric one, or a value that is not a choice is a 400 at /fixed/<name>.'),
  })
  .strict();

export const ImportanceQuery = z.object({ generation: Generation, objective: Objective }).strict();

const ObjectiveName = z.string().describe('The objective the model is of (the query\'s `objective`, else the study\'s first; `value` for a study that declares none).');

const Source = z
  .enum(['method', 'fitted'])
  .describe('"method": the GP the method itself fitted in that generation (prob-cmaes, prob-xnes, prob-snes; bo, pibo; a study of one objective only); "fitted": a GP fitted for this view to the points completed by then (methods without a model, generations before a method\'s first fit, and every study of several objectives).');

const Axis = z.object({
  name: z.string(),
  scale: z.enum(['linear', 'log']),
  step: z.number().nullable().describe('The parameter\'s step (its values are low + k·step; 1 for an int), null for a continuous float. The model is continuous: `values` are not restricted to the grid.'),
  values: z.array(z.number()).describe('Grid values in user units, evenly spaced in the parameter\'s scale (ln of the value for log-scaled parameters), spanning the search distribution\'s ±3σ and the evaluated points, within the bounds.'),
});

export const GridSchema = z
  .object({
    generation: z.int(),
    objective: ObjectiveName,
    source: Source,
    n_points: z.int().describe('Training points of the GP.'),
    x: Axis,
    y: Axis,
    mean: z.array(z.array(z.number())).describe('Posterior mean of the objective in its own units and direction (a maximised objective\'s mean is high where it is good), mean[iy][ix].'),
    std: z.array(z.array(z.number())).describe('Posterior standard deviation of the objective (the GP\'s latent std, without observation noise; for a GP with a quadratic mean, without the uncertainty of its coefficients), std[iy][ix].'),
    loss: z.array(z.array(z.number())).describe('The posterior mean oriented so that lower is better (mean when the objective is minimised, −mean when it is maximised), loss[iy][ix]: the best region is where it is smallest, whatever the direction.'),
    fixed: z.record(z.string(), z.union([z.number(), z.string(), z.boolean()])).describe('Where the other parameters are held: a numeric parameter at the search distribution\'s mean; a categorical one at the choice the query\'s `fixed` names, else its most probable choice under the search distribution. The grid is the model at these values.'),
    distribution: z.object({
      mean: z.array(z.number()).length(2).describe('The search distribution\'s mean of (x, y), user units.'),
      ellipses: z
        .array(z.object({ sigma: z.number(), points: z.array(z.array(z.number()).length(2)) }))
        .describe('The 1σ and 2σ ellipses of its (x, y) marginal (Gaussian in the parameters\' scale), as closed polygons in user units.'),
    }),
    points: z
      .array(
        z.object({
          trial_id: z.int(),
          x: z.number(),
          y: z.number(),
          value: z.number().describe('The trial\'s value of the objective shown.'),
          generation: z.int(),
          in_model: z.boolean().describe('Whether the GP shown was conditioned on this point.'),
          same_choices: z.boolean().describe('Whether the trial\'s categorical parameters have the values in `fixed` (always true without categorical parameters): the points the grid\'s slice passes through.'),
        }),
      )
      .describe('The COMPLETED trials with a value of the objective (not those reported infeasible) that are in the model or among the 1000 most recently completed.'),
  })
  .meta({ id: 'ModelGrid' });

export const ImportanceSchema = z
  .object({
    generation: z.int(),
    objective: ObjectiveName,
    source: Source,
    n_points: z.int(),
    uncertainty: z
      .enum(['joint', 'conditional'])
      .nullable()
      .describe('How the intervals were obtained: the Laplace approximation of the hyperparameter posterior ("joint"; "conditional" when its Hessian is not positive definite and the other hyperparameters are held fixed), or null when neither exists, and when the GP has more than 100 inputs (one per numeric parameter and one per choice of each categorical parameter), where the Hessian would cost more than the largest numeric study\'s.'),
    parameters: z
      .array(
        z.object({
          name: z.string(),
          type: z.enum(['numeric', 'categorical']),
          scale: z.enum(['linear', 'log']).nullable().describe('The numeric parameter\'s scale; null for a categorical one.'),
          lengthscale: z.number().nullable().describe('The GP kernel\'s length scale along this numeric parameter, in its scale (units of the value, or of ln value for log-scaled parameters): the distance over which the objective changes appreciably. Null for a categorical parameter (its choices are not at a distance).'),
          lengthscale_interval: z.array(z.number()).length(2).nullable().describe('95% interval from the Laplace approximation; null when unavailable, and for a categorical parameter.'),
          relevance: z.number().describe('How much the objective varies across the parameter\'s prior, on one scale for both types. Numeric: r = prior std / length scale; two independent draws of the parameter from its prior then correlate, in expectation under the kernel, by (1 + 2r²)^(-1/2). Categorical: the same relation read backwards, r = √((ρ⁻² − 1)/2), with ρ the kernel\'s expected correlation between two independent draws of the choice from its prior (from the length scales of its one-hot inputs). A choice reaches at most √(((Σp²)⁻² − 1)/2), 2 for three equally likely choices, since two draws of the same choice always correlate fully.'),
          relevance_interval: z.array(z.number()).length(2).nullable().describe('95% interval from the Laplace approximation (for a categorical parameter through the delta method on its one-hot length scales); null when unavailable.'),
        }),
      )
      .describe('Every parameter, numeric or categorical, in the order of the study\'s parameters.'),
  })
  .meta({ id: 'ModelImportance' });
