/**
 * The model views' reads are bounded by the request, not by the study: on a study of 6,000
 * completed trials, GET …/model/grid and …/model/importance read at most MAX_VIEW_POINTS +
 * MAX_DRAWN_POINTS trials (counted through a wrapped storage: every array a storage method returns,
 * by method), never the study's whole trial list; and the points they use are the ones the
 * definition names (src/domain/studies/model-views.ts): in the model, the last MAX_VIEW_POINTS
 * completed while the generation was current, in completion order (completed_at, then trial id);
 * drawn, those and the MAX_DRAWN_POINTS most recently completed.
 */
import { importedEvaluations } from '../../src/domain/results/index.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runEngineTask } from '../../src/domain/pool/engine-tasks.js';
import { MAX_DRAWN_POINTS, MAX_VIEW_POINTS } from '../../src/domain/studies/model-views.js';
import { resolveOptions } from '../../src/engine/index.js';
import { SqliteStorage, type ImportedEngineState, type ImportedTrial, type Storage, type TrialRecord } from '../../src/storage/index.js';
import { makeTestApp } from '../helpers/app.js';

const N = 6000;
const BATCH = 10;
const STUDY = 'many';

/** Rows (array elements) each storage method returned since the last reset. */
function countingStorage(inner: Storage) {
  const rows = new Map<string, number>();
  const storage = new Proxy(inner, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== 'function') return v;
      return async (...args: unknown[]) => {
        const out = await (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        const n = Array.isArray(out) ? out.length : out && typeof out === 'object' && Array.isArray((out as { trials?: unknown }).trials) ? (out as { trials: unknown[] }).trials.length : 1;
        rows.set(String(prop), (rows.get(String(prop)) ?? 0) + n);
        return out;
      };
    },
  });
  return { storage, rows };
}

const t0 = Date.UTC(2025, 0, 1);
const iso = (k: number) => new Date(t0 + k * 1000).toISOString();

/**
 * A CMA-ES study (d = 2, batch 10, one engine state per generation) with N completed trials, imported;
 * every seventh result arrived 500 s late, so completion order is not trial order.
 */
async function importStudy(storage: Storage): Promise<void> {
  const options = resolveOptions('cmaes', 2);
  const init = runEngineTask({ op: 'init', method: 'cmaes', seed: 1, spec: { dim: 2, batchSize: BATCH, options, box: null } as never });
  if (init.op !== 'init') throw new Error('init');
  const trials: ImportedTrial[] = Array.from({ length: N }, (_, i) => {
    const u = [Math.sin(i) * 0.9, Math.cos(i * 1.3) * 0.9];
    const done = iso(i % 7 === 3 ? i + 500 : i);
    return {
      trialId: i + 1, state: 'COMPLETED', generation: Math.floor(i / BATCH), clientId: null, leaseExpiresAt: null,
      parameters: { x0: u[0]! * 5, x1: u[1]! * 5 }, point: u, value: u[0]! ** 2 + u[1]! ** 2, stderr: null,
      failureReason: null, late: false, source: 'suggested', createdAt: iso(i), completedAt: done, updatedAt: done,
    };
  });
  const generations = N / BATCH;
  const states: ImportedEngineState[] = Array.from({ length: generations + 1 }, (_, g) => ({
    generation: g, revision: g + 1, version: init.state.version, state: { ...init.state, generation: g } as never, createdAt: iso(g * BATCH),
  }));
  const parameters = [0, 1].map((i) => ({ name: `x${i}`, type: 'float', scale: 'linear', bounds: [-5, 5], prior: { mean: 0, std: 2.5 } }));
  await storage.importStudy(
    {
      id: STUDY, tenantId: 'default', name: 'many', direction: 'minimize', parameters, prior: { mean: [0, 0], covariance: [[6.25, 0], [0, 6.25]], std: [2.5, 2.5] },
      method: 'cmaes', batchSize: BATCH, options, seed: 1, maxTrials: null, leaseSeconds: 600, knownOptimum: null, metadata: {}, state: 'ACTIVE', reason: null,
      createdAt: iso(0), generation: generations, updatedAt: iso(N + 500),
    } as never,
    trials,
    states,
    [],
    importedEvaluations({ direction: 'minimize' }, trials),
  );
}

const byCompletion = (a: TrialRecord, b: TrialRecord) => (a.completedAt! < b.completedAt! ? -1 : a.completedAt! > b.completedAt! ? 1 : a.trialId - b.trialId);

let app: FastifyInstance;
let rows: Map<string, number>;
/** Every trial, read from the inner storage (not counted): the definition's input. */
let all: TrialRecord[];
let stateAt: (g: number) => string;

beforeAll(async () => {
  const inner = SqliteStorage.open(':memory:');
  await importStudy(inner);
  all = (await inner.listAllTrials(STUDY)).sort(byCompletion);
  stateAt = (g) => iso(g * BATCH);
  const counting = countingStorage(inner);
  rows = counting.rows;
  ({ app } = await makeTestApp({ storage: counting.storage }));
}, 60_000);
afterAll(async () => {
  await app?.close();
});

/** Trial rows the last request read (the methods that return trials), and every method it called. */
function trialRowsRead(): { trials: number; methods: string[] } {
  const trialMethods = ['listAllTrials', 'listCompletedTrials', 'listTrials', 'listRecentCompleted', 'exportStudy', 'loadLoopState', 'stepPeers'];
  const trials = trialMethods.reduce((sum, m) => sum + (rows.get(m) ?? 0), 0);
  return { trials, methods: [...rows.keys()].sort() };
}

describe('model views of a study with many trials', () => {
  it.each([
    ['the latest generation', undefined, null],
    ['generation 100', 100, 101],
  ])('grid of %s: at most MAX_VIEW_POINTS + MAX_DRAWN_POINTS trials read, the points the definition names', async (_, generation, until) => {
    rows.clear();
    const q = generation === undefined ? '' : `&generation=${generation}`;
    const res = await app.inject({ method: 'GET', url: `/v1/studies/${STUDY}/model/grid?x=x0&y=x1&n=5${q}` });
    expect(res.statusCode, res.body).toBe(200);
    const read = trialRowsRead();
    expect(read.methods).not.toContain('listAllTrials');
    expect(read.methods).not.toContain('listCompletedTrials');
    expect(read.trials).toBeLessThanOrEqual(MAX_VIEW_POINTS + MAX_DRAWN_POINTS);

    // By definition (no own GP: a GP fitted to what was completed while the generation was current).
    const inModel = all.filter((t) => until === null || t.completedAt! <= stateAt(until)).slice(-MAX_VIEW_POINTS);
    const drawn = new Set([...inModel, ...all.slice(-MAX_DRAWN_POINTS)].map((t) => t.trialId));
    const body = res.json() as { source: string; n_points: number; points: { trial_id: number; in_model: boolean }[] };
    expect(body.source).toBe('fitted');
    expect(body.n_points).toBe(MAX_VIEW_POINTS);
    expect(body.points.map((p) => p.trial_id)).toEqual([...drawn].sort((a, b) => a - b));
    expect(body.points.filter((p) => p.in_model).map((p) => p.trial_id)).toEqual(inModel.map((t) => t.trialId).sort((a, b) => a - b));
  }, 60_000);

  it('importance: at most MAX_VIEW_POINTS trials read', async () => {
    rows.clear();
    const res = await app.inject({ method: 'GET', url: `/v1/studies/${STUDY}/model/importance?generation=100` });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().n_points).toBe(MAX_VIEW_POINTS);
    const read = trialRowsRead();
    expect(read.methods).not.toContain('listAllTrials');
    expect(read.trials).toBeLessThanOrEqual(MAX_VIEW_POINTS);
  }, 60_000);

  it('a ProbNES study\'s own GP: importance reads no trial, the grid only what it draws', async () => {
    const created = await app.inject({ method: 'POST', url: '/v1/studies', payload: { name: 'own-gp', method: 'prob-cmaes', batch_size: 4, seed: 3, options: { candidates: 64 }, parameters: [{ name: 'a', bounds: [-3, 3] }, { name: 'b', bounds: [-3, 3] }] } });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as string;
    for (let g = 0; g < 3; g++) {
      const trials = (await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=4` })).json().trials as { trial_id: number; parameters: { a: number; b: number } }[];
      const obs = await app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: trials.map((t) => ({ trial_id: t.trial_id, value: t.parameters.a ** 2 + t.parameters.b })) } });
      expect(obs.statusCode, obs.body).toBe(200);
    }
    rows.clear();
    const imp = await app.inject({ method: 'GET', url: `/v1/studies/${id}/model/importance` });
    expect(imp.statusCode, imp.body).toBe(200);
    expect(imp.json().source).toBe('method');
    expect(trialRowsRead().trials).toBe(0);
    rows.clear();
    const grid = await app.inject({ method: 'GET', url: `/v1/studies/${id}/model/grid?x=a&y=b&n=4` });
    expect(grid.statusCode, grid.body).toBe(200);
    // Twelve completed: all of them drawn, read once.
    expect(grid.json().points).toHaveLength(12);
    expect(trialRowsRead().trials).toBe(12);
  }, 60_000);
});
