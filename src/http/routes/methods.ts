/**
 * GET /v1/methods: the methods this server runs and what a client needs to know about each, read
 * from the registry (src/engine/strategies/registry.ts, the one list of methods). The dashboard and
 * the clients read these facts here instead of keeping lists of method names of their own.
 */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { DEFAULT_METHOD, METHOD_FAMILIES, METHOD_NAMES, getStrategy, methodFacts, type MethodName } from '../../engine/index.js';

const MethodSchema = z.object({
  name: z.enum(METHOD_NAMES),
  default: z.boolean().describe('The method of a study created without one.'),
  family: z
    .enum(METHOD_FAMILIES)
    .describe('probnes: the ProbNES methods (a GP of their own on an active set); bo: BO and πBO (a GP on every evaluation); evolution-strategy: CMA-ES, lq-CMA-ES, xNES, SNES; random.'),
  has_model: z.boolean().describe('Fits a model of the objective (a GP, or lq-CMA-ES\'s surrogate), so that an update costs more as the data grows; without one a call is light.'),
  ranks_generation: z
    .boolean()
    .describe('Ranks a generation\'s points and updates from its batch_size results only: points handed out beyond the generation (`extras`) are lost to it, so give a study of it batch_size ≥ its workers. The others learn from every result.'),
  search_distribution: z
    .boolean()
    .describe('Keeps a search distribution it updates (GET …/distribution, the dashboard\'s ellipses); without one, the distribution reported is the prior\'s spread around the method\'s current centre.'),
  min_batch_size: z.int().describe('The smallest batch_size a study of the method accepts.'),
  categorical: z.boolean().describe('Searches categorical parameters.'),
  multi_objective: z.boolean().describe('Searches for the Pareto front of several objectives; a study of several objectives needs such a method.'),
  constraints: z.boolean().describe('Learns from constraint values and infeasible points; a study with constraints needs such a method.'),
});

const MethodListSchema = z
  .object({ methods: z.array(MethodSchema).describe('Every method, the default first.') })
  .meta({
    examples: [
      {
        methods: [
          { name: 'prob-cmaes', default: true, family: 'probnes', has_model: true, ranks_generation: false, search_distribution: true, min_batch_size: 1, categorical: true, multi_objective: true, constraints: true },
          { name: 'cmaes', default: false, family: 'evolution-strategy', has_model: false, ranks_generation: true, search_distribution: true, min_batch_size: 2, categorical: true, multi_objective: false, constraints: false },
        ],
      },
    ],
  });

export type MethodResource = z.infer<typeof MethodSchema>;

/** One method as the API describes it. */
export function toMethodResource(name: MethodName): MethodResource {
  const facts = methodFacts(name);
  const strategy = getStrategy(name);
  return {
    name,
    default: name === DEFAULT_METHOD,
    family: facts.family,
    has_model: facts.hasModel,
    ranks_generation: facts.ranksGeneration,
    search_distribution: facts.searchDistribution,
    min_batch_size: strategy.minBatch,
    categorical: strategy.categorical === true,
    multi_objective: facts.multiObjective,
    constraints: facts.constraints,
  };
}

export const methodRoutes: FastifyPluginAsyncZod = async (app) => {
  const body = { methods: [DEFAULT_METHOD, ...METHOD_NAMES.filter((m) => m !== DEFAULT_METHOD)].map(toMethodResource) };
  app.get('/v1/methods', {
    schema: {
      summary: 'List the methods',
      description: 'The optimisation methods a study may use (`method`), with what a client needs to know about each: whether it ranks a generation (then give it batch_size ≥ workers), keeps a search distribution, fits a model. The same for every tenant.',
      tags: ['studies'],
      response: { 200: MethodListSchema },
    },
    handler: async () => body,
  });
};
