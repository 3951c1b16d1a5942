/**
 * Helpers for tests of the suggest/observe loop: Branin, a study body, an app with a controllable
 * clock, and the in-process reference that drives the engine directly with the same transforms.
 */
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { handOut, initSpec } from '../../src/domain/studies/engine-ops.js';
import type { EngineRunner } from '../../src/domain/pool/engine-pool.js';
import { searchSpace } from '../../src/domain/studies/transforms.js';
import type { ParamValue } from '../../src/domain/studies/study-request.js';
import { generationSize, getStrategy, methodFacts, Rng, type BaseState, type MethodName, type Observation } from '../../src/engine/index.js';
import { SqliteStorage, type Storage } from '../../src/storage/index.js';

/** Branin–Hoo on x1 ∈ [−5, 10], x2 ∈ [0, 15]; minimum 0.397887. */
export function branin(p: Record<string, number>): number {
  const { x1, x2 } = p as { x1: number; x2: number };
  const b = 5.1 / (4 * Math.PI ** 2);
  const c = 5 / Math.PI;
  const t = 1 / (8 * Math.PI);
  return (x2 - b * x1 ** 2 + c * x1 - 6) ** 2 + 10 * (1 - t) * Math.cos(x1) + 10;
}

export function braninStudy(method: MethodName, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: `branin-${method}`,
    method,
    batch_size: 3,
    seed: 7,
    parameters: [
      { name: 'x1', bounds: [-5, 10] },
      { name: 'x2', bounds: [0, 15] },
    ],
    ...overrides,
  };
}

/** Cheap option overrides so every method runs a few generations quickly (same in both drivers). */
export function fastOptions(method: MethodName): Record<string, number> {
  if (methodFacts(method).family === 'probnes') return { candidates: 64 };
  if (methodFacts(method).family === 'bo') return { candidates: 200, mc_samples: 32 };
  return {};
}

export interface Clock {
  now: () => Date;
  advance(ms: number): void;
}

export function clock(start = Date.UTC(2025, 0, 1, 12)): Clock {
  let t = start;
  return { now: () => new Date(t), advance: (ms) => (t += ms) };
}

export async function loopApp(opts: { clock?: Clock; engine?: EngineRunner; storage?: Storage; idPrefix?: string } = {}): Promise<{ app: FastifyInstance; storage: Storage }> {
  const storage = opts.storage ?? SqliteStorage.open(':memory:');
  let tick = 0;
  let id = 0;
  const app = await buildApp({
    config: { bodyLimit: 1024 * 1024, requestTimeoutMs: 30_000 },
    storage,
    logger: false,
    ...(opts.engine ? { engine: opts.engine } : {}),
    service: {
      now: opts.clock?.now ?? (() => new Date(Date.UTC(2025, 0, 1, 12, 0, 0, tick++))),
      newId: () => `${opts.idPrefix ?? 'study'}-${String(++id).padStart(4, '0')}`,
      newSeed: () => 12345,
    },
  });
  return { app, storage };
}

interface StudyResponse {
  method: MethodName;
  batch_size: number;
  seed: number;
  max_trials?: number | null;
  direction: 'minimize' | 'maximize';
  options: Record<string, number | string | boolean>;
  parameters: Parameters<typeof searchSpace>[0];
  prior: Parameters<typeof searchSpace>[1];
}

/**
 * The engine driven in-process exactly as the API contract says a sequential client drives the
 * server: init → ask(the generation's size: q, or lq-CMA-ES's choice) → hand out → evaluate →
 * tell(batch, history) → …
 * Returns the handed-out parameters of each generation.
 */
export function referenceTrajectory(study: StudyResponse, generations: number, f: (p: Record<string, number>) => number): Record<string, ParamValue>[][] {
  const space = searchSpace(study.parameters, study.prior);
  const strategy = getStrategy(study.method);
  let state: BaseState = strategy.init(initSpec(study.method, study.batch_size, study.options, space, study.max_trials ?? null), Rng.fromSeed(study.seed));
  const history: Observation[] = [];
  const out: Record<string, ParamValue>[][] = [];
  const sign = study.direction === 'maximize' ? -1 : 1;
  for (let g = 0; g < generations; g++) {
    const asked = strategy.ask(state, { history: [...history], pending: [] }, generationSize(state));
    state = asked.state;
    const handed = asked.points.map((u) => handOut(space, u));
    out.push(handed.map((h) => h.parameters));
    const batch = handed.map((h) => ({ x: h.point, y: sign * f(h.parameters as Record<string, number>) }));
    history.push(...batch);
    state = strategy.tell(state, { batch, history: [...history] });
  }
  return out;
}
