/** Schemas of the suggest/observe loop and the trial actions (docs/API.md "The suggest/observe loop"). */
import { z } from 'zod';
import { LEASES_LISTED, LIMITS, ObservationsRequest, STUDY_STATES, Timestamp, wellFormed, type BudgetHeld } from '../../domain/index.js';
import { TrialSchema } from './trial.js';

const ClientId = z
  .string()
  .regex(/^[A-Za-z0-9._:@/-]{1,128}$/, 'must be 1–128 characters of A–Z a–z 0–9 . _ : @ / -')
  .describe('Who evaluates the points (a worker name). Absent means the client `default`.');

export const SuggestionsQuery = z.strictObject({
  count: z.coerce.number().int().min(1).max(LIMITS.batchSize).default(1).describe(`How many points (1–${LIMITS.batchSize}, default 1).`),
  client_id: ClientId.optional(),
});

const exampleSuggested = {
  trial_id: 12,
  state: 'ACTIVE',
  parameters: { log_lr: -2.7, dropout: 0.18, width: 128 },
  generation: 4,
  client_id: 'worker-1',
  lease_expires_at: '2025-01-01T12:10:00.000Z',
  value: null,
  stderr: null,
  failure_reason: null,
  late: false,
  source: 'suggested',
  created_at: '2025-01-01T12:00:00.000Z',
  completed_at: null,
};

export const SuggestionsSchema = z
  .object({
    trials: z.array(TrialSchema).describe('ACTIVE trials leased to the client: the ones it already held first, then new ones.'),
    reason: z
      .enum(['study_completed', 'study_paused', 'max_trials_reached', 'converged'])
      .nullable()
      .describe(
        'Why fewer than `count` trials came back; null when all did. converged: the search distribution yields no configuration the study has not evaluated or handed out yet ' +
          '(a suggestion never repeats one unless the study has allow_repeats); with nothing pending the study is then COMPLETED with reason converged.',
      ),
    generation: z.int().describe('The study\'s generation (number of distribution updates so far).'),
    generation_size: z
      .int()
      .describe(
        'How many results of this generation the next update waits for: batch_size, except for lq-cmaes, whose surrogate decides per generation how many of its candidates are truly evaluated (a client evaluating one generation per request asks for this many).',
      ),
    extras: z
      .object({
        count: z.int().min(1).describe('How many of `trials` go beyond the generation_size results the update waits for.'),
        reason: z.string().describe('What that costs and what to do, for people reading the answer.'),
      })
      .nullable()
      .describe(
        'Non-null when some of `trials` are extras: points beyond the generation_size results the current generation\'s update waits for, handed out because more were asked for (by one request or by several clients) than the generation has. ' +
          'They come from the same search distribution, which moves once per generation_size results. cmaes, lq-cmaes, xnes and snes rank generation_size results and never use the others: give such a study batch_size ≥ the number of workers. ' +
          'The ProbNES methods and BO learn from every result, so extras cost them nothing. Null otherwise.',
      ),
    budget: z
      .object({
        max_trials: z.int().describe('The study\'s max_trials.'),
        completed: z.int().describe('COMPLETED trials.'),
        leased: z.int().describe('ACTIVE trials: leased to a client and not reported yet (the asker\'s own included).'),
        requested: z.int().describe('REQUESTED trials: created, or back from an expired lease, waiting for the next asker.'),
        leases: z
          .array(
            z.object({
              trial_id: z.int(),
              client_id: z.string().describe('Who holds the lease.'),
              lease_expires_at: Timestamp.describe('When the trial goes back to REQUESTED unless its holder reports, fails, abandons or heartbeats it first.'),
            }),
          )
          .max(LEASES_LISTED)
          .describe(`The ACTIVE trials, the soonest to expire first: at most ${LEASES_LISTED} (\`leased\` counts them all).`),
      })
      .nullable()
      .describe(
        'Non-null when reason is max_trials_reached: what holds the budget. max_trials counts REQUESTED, ACTIVE and COMPLETED trials (failed and abandoned ones free their slot), ' +
          'so while completed < max_trials the study stays ACTIVE and the rest of the budget is held by leases. A lease holds its slot until the trial is reported, failed or abandoned, ' +
          'or until it expires: the trial then goes back to REQUESTED with the same point and the next asker gets it (docs/limits.md). Null otherwise.',
      ),
  })
  .meta({
    examples: [
      { trials: [exampleSuggested], reason: null, generation: 4, generation_size: 3, extras: null, budget: null },
      {
        trials: [],
        reason: 'max_trials_reached',
        generation: 9,
        generation_size: 3,
        extras: null,
        budget: {
          max_trials: 30,
          completed: 27,
          leased: 3,
          requested: 0,
          leases: [28, 29, 30].map((trial_id) => ({ trial_id, client_id: 'worker-2', lease_expires_at: '2025-01-01T12:10:00.000Z' })),
        },
      },
    ],
  });

/** The `budget` field of a suggestions answer. */
export function budgetNote(b: BudgetHeld | null): z.output<typeof SuggestionsSchema>['budget'] {
  if (b === null) return null;
  return {
    max_trials: b.maxTrials,
    completed: b.completed,
    leased: b.leased,
    requested: b.requested,
    leases: b.leases.map((l) => ({ trial_id: l.trialId, client_id: l.clientId, lease_expires_at: l.leaseExpiresAt })),
  };
}

/**
 * The `extras` field of a suggestions answer: null when every point belongs to the generation.
 * The advice depends on the method (measured by bench/workers-vs-batch.ts, docs/BENCHMARKS.md):
 * a method that ranks a generation loses the extras' results, so batch_size ≥ workers helps it;
 * ProbNES uses them all and, with asynchronous workers, did better with a small batch_size.
 */
export function extrasNote(count: number, generationSize: number, ranksGeneration: boolean): z.output<typeof SuggestionsSchema>['extras'] {
  if (count === 0) return null;
  const what =
    `${count} of these points go beyond the ${generationSize} results this generation's update waits for (generation_size). ` +
    'They are drawn from the current search distribution, which moves once per generation_size results. ';
  const advice = ranksGeneration
    ? 'This method ranks generation_size results and never uses the others, so more workers than batch_size waste evaluations: give the study batch_size ≥ the number of workers.'
    : 'This method learns from every result, so extras cost it nothing; with asynchronous workers a small batch_size keeps its updates frequent.';
  return { count, reason: what + advice };
}

export const ObservationsBody = ObservationsRequest.meta({
  examples: [
    {
      observations: [
        { trial_id: 12, value: 0.731 },
        { trial_id: 13, value: 0.52, stderr: 0.01 },
        { parameters: { log_lr: -4, dropout: 0.1, width: 64 }, value: 0.9 },
      ],
    },
    {
      observations: [
        { trial_id: 4, values: [0.12, 8.5], constraints: [-0.5] },
        { trial_id: 5, infeasible: true },
      ],
    },
  ],
});

export const ObservationsSchema = z
  .object({
    trials: z.array(TrialSchema).describe('The observed trials, in request order (external points as new trials).'),
    generation: z.int().describe('The study\'s generation after these results (it advanced if they completed one).'),
    study_state: z.enum(STUDY_STATES).describe('COMPLETED once max_trials results are in.'),
  })
  .meta({
    examples: [
      { trials: [{ ...exampleSuggested, state: 'COMPLETED', lease_expires_at: null, value: 0.731, completed_at: '2025-01-01T12:05:00.000Z' }], generation: 5, study_state: 'ACTIVE' },
    ],
  });

export const HeartbeatBody = z
  .strictObject({ client_id: ClientId.optional().describe('If given, the lease must be this client\'s (else 409 lease_not_held).') })
  // No body at all is fine too (Fastify then hands the validator null or undefined).
  .nullish()
  .meta({ examples: [{ client_id: 'worker-1' }] });

export const FailBody = z
  .strictObject({
    reason: wellFormed(z.string().trim().min(1).max(2000)).describe('What went wrong (kept in failure_reason).'),
    client_id: ClientId.optional().describe('If given and the trial is ACTIVE, the lease must be this client\'s.'),
  })
  .meta({ examples: [{ reason: 'CUDA out of memory', client_id: 'worker-1' }] });

export const AbandonBody = z
  .strictObject({ client_id: ClientId.optional().describe('If given and the trial is ACTIVE, the lease must be this client\'s.') })
  // No body at all is fine too (Fastify then hands the validator null or undefined).
  .nullish()
  .meta({ examples: [{ client_id: 'worker-1' }] });
