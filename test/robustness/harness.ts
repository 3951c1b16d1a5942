/**
 * Robustness harness: a sequential client drives one study through the HTTP API (in-process) and,
 * after every generation, checks the invariants that must hold whatever the objective returns:
 * every suggested parameter finite, inside its bounds, integral for int parameters and positive
 * for log ones; the /distribution mean finite and its covariance symmetric positive definite; no
 * 5xx; the study still ACTIVE. Each generation is asked as a client asks it (the batch, or `count`)
 * and completed if it needs more (ProbNES's start phase, docs/ALGORITHM.md §29: generation 0 is the
 * 2d + 1 stencil), so the hostile values and geometry go through the phase and its hand-over too.
 */
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromRows, METHOD_NAMES, methodFacts, tryCholesky, type MethodName } from '../../src/engine/index.js';
import { buildApp } from '../../src/app.js';
import { SqliteStorage } from '../../src/storage/index.js';

export type Params = Record<string, number>;

export interface ParamSpec {
  name: string;
  type?: 'float' | 'int';
  scale?: 'linear' | 'log';
  bounds?: [number, number];
  prior?: { mean: number; std: number };
}

export interface Scenario {
  name: string;
  parameters: ParamSpec[];
  /** A joint prior (transformed scale), instead of per-parameter ones. */
  prior?: { mean: number[]; covariance: number[][] };
  objective: (p: Params) => number;
  /**
   * External observations to post after each generation (identical points and values repeated:
   * the "same value for the same parameters many times" case).
   */
  extra?: (generation: number) => { parameters: Params; value: number }[];
  /** Method options on top of the cheap ones (user-settable extremes). */
  options?: (method: MethodName) => Record<string, number | string | boolean>;
  /** Points per generation (default 3). */
  batchSize?: number;
  /**
   * Points asked per request (default: the batch size); more than the batch size asks for extra
   * points of the same generation, conditioned on the pending ones.
   */
  count?: number;
  /**
   * Checked once at the end, on the trials handed out (e.g. that points really repeat), in order, and
   * per generation with the generation's size (the results its update waited for).
   */
  finally?: (handed: Params[], method: MethodName, generations: GenerationRecord[]) => void;
  /** Run with the no-repeat rule on (allow_repeats false): a suggestion may then answer reason "converged". */
  noRepeats?: boolean;
}

/** Cheap option overrides, so every method runs its generations within the folder's time budget. */
export function cheapOptions(method: MethodName): Record<string, number> {
  if (methodFacts(method).family === 'probnes') return { candidates: 48 };
  if (methodFacts(method).family === 'bo') return { candidates: 100, mc_samples: 16 };
  return {};
}

/**
 * Generations per method, to keep the folder within its time budget on a loaded machine (measured
 * per method: the HTTP round trips dominate for the evolution strategies, the GP fits for
 * ProbNES): 12 for the model-based methods, whose GPs grow with the history; 20 for the
 * evolution strategies, whose slow failures (a covariance squeezed over tens of generations) are
 * pinned at the engine level in test/engine/robustness.test.ts; 8 for random, which never
 * changes its distribution.
 */
export function generationsFor(method: MethodName): number {
  if (method === 'random') return 8;
  if (method === 'cmaes' || method === 'xnes' || method === 'snes') return 20;
  return 12;
}

/**
 * A covariance is symmetric positive definite: exactly symmetric (the API symmetrises it), a
 * finite positive diagonal, and a Cholesky factor of its correlation matrix D^{-1/2} C D^{-1/2}
 * (PD iff C is, and scale-free, so a parameter with a huge range does not hide a lost pivot).
 */
export function expectSpd(cov: number[][], where: string): void {
  const d = cov.length;
  for (let i = 0; i < d; i++) {
    expect(cov[i]!.length, where).toBe(d);
    expect(Number.isFinite(cov[i]![i]) && cov[i]![i]! > 0, `${where}: diagonal ${i} = ${cov[i]![i]}`).toBe(true);
    for (let j = 0; j < d; j++) {
      expect(Number.isFinite(cov[i]![j]), `${where}: entry (${i},${j}) = ${cov[i]![j]}`).toBe(true);
      expect(cov[i]![j], `${where}: symmetric at (${i},${j})`).toBe(cov[j]![i]);
    }
  }
  // √a_ii·√a_jj, not √(a_ii·a_jj): the product overflows for variances beyond 1e154.
  const sd = cov.map((row, i) => Math.sqrt(row[i]!));
  const corr = cov.map((row, i) => row.map((v, j) => v / sd[i]! / sd[j]!));
  // A relative pivot floor of 1e-14: a correlation matrix whose pivots fall below it is singular
  // to working precision, so a "valid" covariance must clear it.
  expect(tryCholesky(fromRows(corr), 1e-14), `${where}: covariance not positive definite ${JSON.stringify(cov)}`).not.toBeNull();
}

export function expectLegal(params: Params, specs: readonly ParamSpec[], where: string): void {
  expect(Object.keys(params).sort(), where).toEqual(specs.map((p) => p.name).sort());
  for (const p of specs) {
    const v = params[p.name]!;
    expect(Number.isFinite(v), `${where}: ${p.name} = ${v} is not finite`).toBe(true);
    if (p.bounds) {
      expect(v >= p.bounds[0] && v <= p.bounds[1], `${where}: ${p.name} = ${v} outside [${p.bounds}]`).toBe(true);
    }
    if (p.type === 'int') expect(Number.isInteger(v), `${where}: int ${p.name} = ${v}`).toBe(true);
    if (p.scale === 'log') expect(v > 0, `${where}: log ${p.name} = ${v}`).toBe(true);
  }
}

/**
 * The loop app of the other loop tests, logging errors into memory: an engine failure during an
 * update is logged and retried rather than answered (generation.ts), so a study stuck on a failing
 * update is visible only in the log; the harness fails on any error line.
 */
export interface RobustnessApp {
  app: FastifyInstance;
  errors: () => string[];
  clear: () => void;
}

export async function robustnessApp(): Promise<RobustnessApp> {
  let lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter((l) => l.length > 0));
      done();
    },
  });
  let tick = 0;
  let id = 0;
  // As test/helpers/loop.ts builds it (in-memory database, inline engine, distinct timestamps).
  const app = await buildApp({
    // No rate limit: one client sends thousands of requests a minute here by design.
    config: { bodyLimit: 1024 * 1024, requestTimeoutMs: 30_000, rateLimitPerMinute: 0 },
    storage: SqliteStorage.open(':memory:'),
    logger: pino({ level: 'error' }, sink),
    service: {
      now: () => new Date(Date.UTC(2025, 0, 1, 12, 0, 0, tick++)),
      newId: () => `study-${String(++id).padStart(4, '0')}`,
      newSeed: () => 12345,
    },
  });
  return { app, errors: () => lines, clear: () => (lines = []) };
}

function expectNo5xx(res: { statusCode: number; body: string }, where: string): void {
  expect(res.statusCode < 500, `${where}: ${res.statusCode} ${res.body}`).toBe(true);
}

/** One generation as the client saw it: its size (generation_size) and the points handed out in it. */
export interface GenerationRecord {
  size: number;
  handed: Params[];
}

export interface RunResult {
  handed: Params[];
  generation: number;
  generations: GenerationRecord[];
}

/**
 * Runs `generations` generations of the scenario's batch (3 by default; `count` ≥ the batch; the whole generation when
 * its generation_size is larger) for `method`, checking the invariants after creation and after every generation.
 */
export async function runScenario(env: RobustnessApp, method: MethodName, scenario: Scenario, generations: number, seed = 7): Promise<RunResult> {
  const body = {
    name: `${scenario.name}-${method}`,
    method,
    batch_size: scenario.batchSize ?? 3,
    seed,
    parameters: scenario.parameters,
    ...(scenario.prior ? { prior: scenario.prior } : {}),
    options: { ...cheapOptions(method), ...(scenario.options?.(method) ?? {}) },
    // The scenarios stress the numerics with repeated points (tiny int grids, points clipped onto the
    // same corner, a stalled mean), so the method's own points are handed out as drawn; the rule that
    // redraws repeats (loop/no-repeat.ts) is checked under the same scenarios by no-repeat.test.ts.
    allow_repeats: scenario.noRepeats !== true,
  };
  const { app } = env;
  env.clear();
  const created = await app.inject({ method: 'POST', url: '/v1/studies', payload: body });
  expectNo5xx(created, 'create');
  if (created.statusCode === 400 && body.batch_size < 2) {
    // The documented limit (docs/limits.md): rank-based methods need two points per generation.
    expect(created.json().errors.map((e: { path: string }) => e.path), created.body).toContain('/batch_size');
    return { handed: [], generation: 0, generations: [] };
  }
  expect(created.statusCode, created.body).toBe(201);
  const id = created.json().id as string;
  const handed: Params[] = [];
  const generationsSeen: GenerationRecord[] = [];
  type Suggested = { trials: { trial_id: number; parameters: Params; generation: number }[]; reason: string | null; generation: number; generation_size: number };
  const ask = async (count: number, where: string): Promise<Suggested> => {
    const res = await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=${count}` });
    expectNo5xx(res, where);
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as Suggested;
  };

  const checkDistribution = async (where: string) => {
    const res = await app.inject({ method: 'GET', url: `/v1/studies/${id}/distribution` });
    expectNo5xx(res, where);
    expect(res.statusCode, res.body).toBe(200);
    const d = res.json() as { mean: Params; mean_transformed: number[]; covariance: number[][]; std: number[] };
    for (const p of scenario.parameters) {
      expect(Number.isFinite(d.mean[p.name]), `${where}: mean of ${p.name} = ${d.mean[p.name]}`).toBe(true);
    }
    expect(d.mean_transformed.every(Number.isFinite), `${where}: transformed mean ${d.mean_transformed}`).toBe(true);
    expect(d.std.every((s) => Number.isFinite(s) && s > 0), `${where}: std ${d.std}`).toBe(true);
    expectSpd(d.covariance, `${where}: covariance`);
  };

  await checkDistribution(`${method} after create`);
  let done = generations;
  for (let g = 0; g < generations; g++) {
    const where = `${method}/${scenario.name} generation ${g}`;
    const count = scenario.count ?? body.batch_size;
    let sug = await ask(count, where);
    expect(sug.generation, where).toBe(g);
    // Without repeats a small space runs out of new configurations: the answer says so, and the run ends there.
    let converged = scenario.noRepeats === true && sug.reason === 'converged';
    if (!converged) {
      expect(sug.reason, where).toBeNull();
      expect(sug.trials.length, where).toBe(count);
    }
    if (!converged && sug.generation_size > sug.trials.length) {
      // The generation needs more results than were asked (ProbNES's stencil of 2d + 1): the client asks
      // for the whole generation and gets the trials it holds first, then the rest.
      const held = sug.trials.map((t) => t.trial_id);
      const size = sug.generation_size;
      sug = await ask(size, `${where} (the whole generation of ${size})`);
      expect(sug.generation_size, where).toBe(size);
      converged = scenario.noRepeats === true && sug.reason === 'converged';
      if (!converged) {
        expect(sug.reason, where).toBeNull();
        expect(sug.trials.length, where).toBe(size);
      }
      expect(sug.trials.slice(0, held.length).map((t) => t.trial_id), `${where}: held trials first`).toEqual(held);
    }
    generationsSeen.push({ size: sug.generation_size, handed: sug.trials.map((t) => t.parameters) });
    for (const t of sug.trials) {
      expect(t.generation, where).toBe(g);
      expectLegal(t.parameters, scenario.parameters, where);
      handed.push(t.parameters);
    }
    const observations = [
      ...sug.trials.map((t) => ({ trial_id: t.trial_id, value: scenario.objective(t.parameters) })),
      ...(scenario.extra?.(g) ?? []),
    ];
    if (observations.length > 0) {
      const obs = await app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations } });
      expectNo5xx(obs, where);
      expect(obs.statusCode, obs.body).toBe(200);
    }
    await checkDistribution(where);
    if (converged) {
      // The last points (if any) may have completed this generation.
      done = ((await app.inject({ method: 'GET', url: `/v1/studies/${id}` })).json() as { generation: number }).generation;
      expect(done === g || done === g + 1, `${where}: generation ${done}`).toBe(true);
      expect(env.errors(), `${where}: logged errors`).toEqual([]);
      break;
    }
    const study = await app.inject({ method: 'GET', url: `/v1/studies/${id}` });
    expectNo5xx(study, where);
    const s = study.json() as { state: string; generation: number };
    expect(s.state, where).toBe('ACTIVE');
    expect(env.errors(), `${where}: logged errors`).toEqual([]);
    expect(s.generation, where).toBe(g + 1);
  }
  // /best reads the model's estimate at the mean: it must not fail either.
  const best = await app.inject({ method: 'GET', url: `/v1/studies/${id}/best` });
  expectNo5xx(best, `${method}/${scenario.name} best`);
  expect(best.statusCode, best.body).toBe(200);
  const est = best.json().estimated as { parameters: Params; predicted_value: number | null; predicted_std: number | null };
  expectLegal(est.parameters, scenario.parameters, `${method}/${scenario.name} best.estimated`);
  for (const v of [est.predicted_value, est.predicted_std]) if (v !== null) expect(Number.isFinite(v)).toBe(true);
  // /history reads every generation's distribution back: all of it finite.
  const history = await app.inject({ method: 'GET', url: `/v1/studies/${id}/history` });
  expectNo5xx(history, `${method}/${scenario.name} history`);
  expect(history.statusCode, history.body).toBe(200);
  const h = history.json() as { evaluations: unknown[]; generations: { mean: Params; std: number[] }[] };
  expect(h.generations.length).toBe(done + 1);
  if (scenario.noRepeats) {
    const keys = handed.map((p) => JSON.stringify(scenario.parameters.map((q) => p[q.name])));
    expect(new Set(keys).size, `${method}/${scenario.name}: a configuration handed out twice`).toBe(keys.length);
  }
  for (const g of h.generations) {
    expect(Object.values(g.mean).every(Number.isFinite) && g.std.every((v) => Number.isFinite(v) && v > 0), JSON.stringify(g)).toBe(true);
  }
  scenario.finally?.(handed, method, generationsSeen);
  return { handed, generation: done, generations: generationsSeen };
}

/**
 * The suite of values.test.ts and geometry.test.ts: every method of the engine registry (so a new
 * method is covered without touching the test files) × every scenario given, on one app per file,
 * each run checked after every generation by runScenario.
 */
export function describeEveryMethod(scenarios: readonly Scenario[]): void {
  let env: RobustnessApp;
  beforeAll(async () => {
    env = await robustnessApp();
  });
  afterAll(async () => {
    await env.app.close();
  });
  describe.each([...METHOD_NAMES] as MethodName[])('%s', (method) => {
    it.each(scenarios.map((s) => [s.name, s] as const))('%s: valid suggestions and distribution every generation', async (_name, scenario) => {
      await runScenario(env, method, scenario, generationsFor(method));
    });
  });
}
