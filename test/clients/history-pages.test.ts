/**
 * The clients' history() follows /history's pages and merges them: a study with more generations
 * than one page holds (100) reads whole, as the server's pages put together, from both clients.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProbnesClient } from '../../clients/typescript/src/index.js';
import { buildApp } from '../../src/app.js';
import { SqliteStorage, type Storage } from '../../src/storage/index.js';
import { studyBody } from '../helpers/app.js';
import { pythonPresent } from '../helpers/requirements.js';
import { commit, createStudy, fakeEngineState, stamp, trialAt } from '../helpers/study-data.js';
import { runInClientDir } from './python-run.js';

const hasPython = pythonPresent();
let app: FastifyInstance;
let storage: Storage;
let base = '';
let studyId = '';
const I2 = [[1, 0], [0, 1]];

beforeAll(async () => {
  storage = SqliteStorage.open(':memory:');
  app = await buildApp({ config: { bodyLimit: 1 << 20, requestTimeoutMs: 30_000 }, storage });
  const study = await createStudy(app, studyBody({ method: 'random', batch_size: 1 }));
  studyId = study.id;
  const trials = Array.from({ length: 30 }, (_, i) => trialAt(study, { x: 0.1, lr: 0.01 }, { state: 'COMPLETED', generation: 0, source: 'suggested', value: (i * 7) % 11, completedAt: stamp() }));
  await commit(storage, study.id, 0, fakeEngineState(study, 0, [0, 0], I2), trials);
  for (let g = 1; g <= 150; g++) await commit(storage, study.id, g, fakeEngineState(study, g, [0, 0], I2));
  base = await app.listen({ port: 0, host: '127.0.0.1' });
});

afterAll(async () => {
  await app?.close();
});

/** The server's pages of 10 evaluations, put together by hand. */
async function byHand(): Promise<{ evaluations: unknown[]; generations: { generation: number }[] }> {
  const out = { evaluations: [] as unknown[], generations: [] as { generation: number }[] };
  let token: string | null = null;
  do {
    const page = (await (await fetch(`${base}/v1/studies/${studyId}/history?page_size=10${token ? `&page_token=${encodeURIComponent(token)}` : ''}`)).json()) as {
      evaluations: unknown[];
      generations: { generation: number }[];
      next_page_token: string | null;
    };
    out.evaluations.push(...page.evaluations);
    out.generations.push(...page.generations);
    token = page.next_page_token;
  } while (token);
  return out;
}

describe('clients read the whole paged history', () => {
  it('TypeScript: history() merges the pages', async () => {
    const h = await new ProbnesClient({ baseUrl: base }).history(studyId);
    const expected = await byHand();
    expect(h.generations.map((g) => g.generation)).toEqual(Array.from({ length: 151 }, (_, i) => i));
    expect(h.evaluations).toEqual(expected.evaluations);
    expect(h.generations).toEqual(expected.generations);
    expect(h.evaluation_count).toBe(30);
    expect(h.next_page_token).toBeNull();
    const sampled = await new ProbnesClient({ baseUrl: base }).history(studyId, { stride: 10 });
    expect(sampled.evaluations.length).toBeLessThan(30);
    expect(sampled.evaluations[0]).toEqual(expected.evaluations[0]);
  });

  it.skipIf(!hasPython)('Python: history() merges the pages', async () => {
    const script = 'import sys, json\nfrom probnes_client import Client\nh = Client(sys.argv[1]).history(sys.argv[2])\nprint(json.dumps([len(h["evaluations"]), [g["generation"] for g in h["generations"]], h["next_page_token"]]))';
    const r = await runInClientDir('python3', ['-c', script, base, studyId], { PYTHONDONTWRITEBYTECODE: '1' });
    expect(r.code, r.out).toBe(0);
    const [n, generations, token] = JSON.parse(r.out) as [number, number[], string | null];
    expect(n).toBe(30);
    expect(generations).toEqual(Array.from({ length: 151 }, (_, i) => i));
    expect(token).toBeNull();
  });
});
