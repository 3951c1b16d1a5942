/**
 * The evaluation rows the loop writes with its commits (study-snapshot.ts evaluationRows,
 * results/evaluations.ts): after suggestions, results, failures, external points and a replica
 * whose clock runs behind (its results belong before stored ones), with and without warm
 * snapshots, on SQLite and PostgreSQL, the stored evaluations are those of the definition computed
 * from the COMPLETED trials (completion order, running best strictly better only, its steps), for
 * both directions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LoopService } from '../../src/domain/loop/loop.js';
import { StudyCache } from '../../src/domain/loop/study-cache.js';
import { InlineEngineRunner } from '../../src/domain/pool/engine-pool.js';
import { StudyService } from '../../src/domain/studies/studies.js';
import { CreateStudyRequest } from '../../src/domain/studies/study-request.js';
import { PostgresStorage, SqliteStorage, type EvaluationRecord, type Storage } from '../../src/storage/index.js';
import { createTestDatabase, postgresServer, type TestDatabase } from '../helpers/postgres.js';

const TENANT = 'default';

function lcg(seed: number) {
  let x = seed >>> 0;
  return () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

async function definition(storage: Storage, id: string, direction: 'minimize' | 'maximize'): Promise<EvaluationRecord[]> {
  const better = (a: number, b: number) => (direction === 'minimize' ? a < b : a > b);
  let best: number | null = null;
  return (await storage.listCompletedTrials(id))
    .filter((t) => t.value !== null)
    .map((t, i) => {
      const improved = best === null || better(t.value!, best);
      if (improved) best = t.value!;
      return { index: i + 1, trialId: t.trialId, value: t.value!, bestSoFar: best!, improved };
    });
}

function scenario(open: () => Promise<Storage>) {
  for (const direction of ['minimize', 'maximize'] as const) {
    it(`${direction}: the stored evaluations are the definition's after every request`, async () => {
      const storage = await open();
      let around = 0;
      const counted: Storage = new Proxy(storage, {
        get(target, prop, receiver) {
          if (prop === 'evaluationsAround') around++;
          const v = Reflect.get(target, prop, receiver) as unknown;
          return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
        },
      });
      try {
        let t = Date.UTC(2025, 0, 2, 12);
        const studies = new StudyService({ storage, now: () => new Date(t) });
        const study = await studies.create(TENANT, CreateStudyRequest.parse({
          name: `ev-${direction}`, direction, method: 'random', batch_size: 2, seed: 3, lease_seconds: 600,
          parameters: [{ name: 'x', type: 'float', bounds: [-2, 2] }],
        }));
        // Two replicas: one on time (warm snapshots), one whose clock runs 5 s behind.
        const onTime = new LoopService({ storage: counted, runner: new InlineEngineRunner(), now: () => new Date((t += 1000)), cache: new StudyCache(), warmSnapshots: true });
        const behind = new LoopService({ storage: counted, runner: new InlineEngineRunner(), now: () => new Date((t += 1000) - 5000), cache: new StudyCache() });
        const rnd = lcg(direction === 'minimize' ? 7 : 8);
        const value = () => Math.round(rnd() * 8) / 2 - 2;
        for (let step = 0; step < 40; step++) {
          const loop = rnd() < 0.3 ? behind : onTime;
          const u = rnd();
          if (u < 0.15) {
            await loop.observe(TENANT, study.id, [{ parameters: { x: rnd() * 4 - 2 }, value: value() }]);
          } else {
            const { trials } = await loop.suggest(TENANT, study.id, 1 + Math.floor(rnd() * 2), `w${step % 3}`);
            const [first, ...rest] = trials;
            if (first && u < 0.25) await loop.fail(TENANT, study.id, first.trialId, 'crashed');
            else if (first) await loop.observe(TENANT, study.id, [first, ...rest].map((tr) => ({ trial_id: tr.trialId, value: value(), ...(rnd() < 0.3 ? { stderr: 0.1 } : {}) })));
          }
          expect(await storage.listEvaluations(study.id, { afterIndex: 0, limit: 1000 })).toEqual(await definition(storage, study.id, direction));
        }
        const evals = await storage.listEvaluations(study.id, { afterIndex: 0, limit: 1000 });
        expect(evals.length).toBeGreaterThan(30);
        // The late clock placed results among stored ones, through the read around them.
        expect(around).toBeGreaterThan(0);
        const summary = await storage.evaluationSummary(study.id);
        expect(summary.best).toEqual(evals.filter((e) => e.improved).at(-1));
      } finally {
        await storage.close();
      }
    });
  }
}

describe('the loop\'s evaluation rows (SQLite)', () => {
  scenario(async () => SqliteStorage.open(':memory:'));
});

const server = postgresServer();

describe.skipIf(!server)('the loop\'s evaluation rows (PostgreSQL)', () => {
  let tdb: TestDatabase;
  beforeAll(async () => {
    tdb = await createTestDatabase(server!, 'probnes_loop_ev');
  });
  afterAll(async () => {
    await tdb?.drop();
  });
  scenario(async () => PostgresStorage.open({ url: tdb.url, poolSize: 2 }));
});
