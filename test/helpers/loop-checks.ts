/**
 * Checks shared by the tests of many clients on one study (one process, or replicas sharing a
 * PostgreSQL database): every trial handed to exactly one client, every result exactly once, and
 * the generations advanced as if the requests had come one by one.
 */
import { expect } from 'vitest';
import { generationSize, type BaseState } from '../../src/engine/index.js';
import { branin } from './loop.js';

export type Call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) => Promise<{ status: number; json: any }>;

/**
 * CLIENTS workers, ROUNDS rounds each: ask one point, evaluate, report. With several `calls`
 * (replicas), each client sends its requests to them in turn, starting from a different one.
 */
export async function hammer(calls: Call | Call[], studyId: string, clients: number, rounds: number) {
  const handedTo = new Map<number, string>();
  const sent = new Map<number, number>();
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      const client = `w${c}`;
      let sentRequests = c;
      const call: Call = (...a) => (Array.isArray(calls) ? calls[sentRequests++ % calls.length]! : calls)(...a);
      for (let r = 0; r < rounds; r++) {
        const s = await call('GET', `/v1/studies/${studyId}/suggestions?count=1&client_id=${client}`);
        expect(s.status, JSON.stringify(s.json)).toBe(200);
        expect(s.json.trials).toHaveLength(1);
        const t = s.json.trials[0];
        expect(handedTo.get(t.trial_id) ?? client, `trial ${t.trial_id} handed out twice`).toBe(client);
        handedTo.set(t.trial_id, client);
        const value = branin(t.parameters);
        const o = await call('POST', `/v1/studies/${studyId}/observations`, { observations: [{ trial_id: t.trial_id, value }] });
        expect(o.status, JSON.stringify(o.json)).toBe(200);
        sent.set(t.trial_id, value);
      }
    }),
  );
  return { handedTo, sent };
}

/**
 * Each generation's size (the results its update waits for: batch_size, the start phase's 2d + 1 and 1
 * of ProbNES, ALGORITHM.md §29, lq-CMA-ES's choice), read from the study's engine state of that generation.
 */
export async function generationSizes(call: Call, studyId: string): Promise<number[]> {
  const doc = await call('GET', `/v1/studies/${studyId}/export`);
  expect(doc.status).toBe(200);
  const sizes: number[] = [];
  for (const e of doc.json.engine_states as { generation: number; state: BaseState }[]) sizes[e.generation] = generationSize(e.state);
  return sizes;
}

/**
 * Every result in the study exactly once, and the generations advanced as if the requests had come one
 * by one: each finished generation had its generation's size of results, the current one has fewer.
 * Returns the sizes of generations 0 … current.
 */
export async function check(call: Call, studyId: string, sent: Map<number, number>): Promise<number[]> {
  const study = (await call('GET', `/v1/studies/${studyId}`)).json;
  expect(study.trial_counts.COMPLETED).toBe(sent.size);
  expect(study.trial_counts.ACTIVE).toBe(0);
  expect(study.generation).toBeGreaterThan(0);
  const listed = (await call('GET', `/v1/studies/${studyId}/trials?page_size=1000&state=COMPLETED`)).json;
  expect(listed.trials).toHaveLength(sent.size);
  for (const t of listed.trials) expect(t.value).toBe(sent.get(t.trial_id));
  // Bookkeeping: every finished generation had its batch of results; the current one does not yet.
  const sizes = await generationSizes(call, studyId);
  expect(sizes).toHaveLength(study.generation + 1);
  const perGeneration = new Map<number, number>();
  for (const t of listed.trials) perGeneration.set(t.generation, (perGeneration.get(t.generation) ?? 0) + 1);
  for (let g = 0; g < study.generation; g++) expect(perGeneration.get(g) ?? 0, `generation ${g} of size ${sizes[g]}`).toBeGreaterThanOrEqual(sizes[g]!);
  expect(perGeneration.get(study.generation) ?? 0).toBeLessThan(sizes[study.generation]!);
  return sizes;
}

