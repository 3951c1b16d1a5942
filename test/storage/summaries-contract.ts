/**
 * The read side's summaries, part of the Storage contract (run for every backend from contract.ts):
 * evaluations in completion order with position and best so far, kept by the storage as trials
 * complete, whatever order the completions arrive in; the best; the best-so-far steps; engine
 * states by pages; leases that ran out, as every read shows them.
 *
 * Expected values come from the definition, computed here in a few lines: sort the COMPLETED
 * trials by (completed_at, trial id), keep the running best (strictly better only) and its steps.
 */
import { expect, it } from 'vitest';
import type { EvaluationRecord, NewTrial, Storage } from '../../src/storage/index.js';
import { study } from './contract.js';
import { commitWithEvaluations } from '../helpers/evaluations.js';
import { importedEvaluations } from '../../src/domain/results/index.js';

interface Done {
  trialId: number;
  value: number;
  completedAt: string;
}

/** The evaluations by definition. */
export function expectedEvaluations(done: Done[], direction: 'minimize' | 'maximize'): EvaluationRecord[] {
  const sorted = [...done].sort((a, b) => (a.completedAt < b.completedAt ? -1 : a.completedAt > b.completedAt ? 1 : a.trialId - b.trialId));
  const better = (a: number, b: number) => (direction === 'minimize' ? a < b : a > b);
  let best: number | null = null;
  return sorted.map((d, i) => {
    const improved = best === null || better(d.value, best);
    if (improved) best = d.value;
    return { index: i + 1, trialId: d.trialId, value: d.value, bestSoFar: best!, improved };
  });
}

/** A small deterministic generator (values with ties, timestamps with ties). */
function lcg(seed: number) {
  let x = seed >>> 0;
  return () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

const at = (ms: number) => new Date(Date.UTC(2025, 0, 1) + ms).toISOString();

const completed = (trialId: number, value: number, completedAt: string): NewTrial => ({
  state: 'COMPLETED',
  generation: 0,
  parameters: { x: trialId },
  point: [trialId],
  source: 'external',
  value,
  completedAt,
});

async function commitTrials(s: Storage, studyId: string, trials: NewTrial[], updates: Parameters<Storage['commitGeneration']>[1]['trialUpdates'] = []) {
  const head = await s.getEngineState(studyId);
  const res = await commitWithEvaluations(s, studyId, { expectedRevision: head?.revision ?? null, generation: 0, engineState: null, newTrials: trials, trialUpdates: updates, now: at(999_999) });
  if (!res.committed) throw new Error(`commit refused: ${res.reason}`);
  return res.trialIds;
}

async function allEvaluations(s: Storage, studyId: string): Promise<EvaluationRecord[]> {
  const out: EvaluationRecord[] = [];
  for (let after = 0; ; ) {
    const page = await s.listEvaluations(studyId, { afterIndex: after, limit: 7 });
    if (page.length === 0) return out;
    out.push(...page);
    after = page[page.length - 1]!.index;
  }
}

export function summariesContract(storage: () => Storage): void {
  for (const direction of ['minimize', 'maximize'] as const) {
    it(`evaluations (${direction}): position, best so far and steps as by definition, completions arriving in any order and in several commits`, async () => {
      const s = storage();
      await s.createStudy(study('ev', 'default', { direction }), { version: 1, state: { mean: [0] } });
      const rnd = lcg(direction === 'minimize' ? 11 : 12);
      const done: Done[] = [];
      let id = 0;
      for (let commit = 0; commit < 6; commit++) {
        // Values from a handful (ties), times with repeats and out of order (an import, a clock behind).
        const batch = Array.from({ length: 1 + Math.floor(rnd() * 8) }, () => ({ trialId: ++id, value: Math.floor(rnd() * 6), completedAt: at(Math.floor(rnd() * 20)) }));
        done.push(...batch);
        await commitTrials(
          s,
          'ev',
          batch.map((d) => completed(d.trialId, d.value, d.completedAt)),
        );
      }
      // Trials that complete later by an update (REQUESTED → COMPLETED), and ones that do not count.
      const [r1, r2, f1] = await commitTrials(s, 'ev', [
        { state: 'REQUESTED', generation: 0, parameters: { x: 0 }, point: [0], source: 'suggested' },
        { state: 'REQUESTED', generation: 0, parameters: { x: 0 }, point: [0], source: 'suggested' },
        { state: 'FAILED', generation: 0, parameters: { x: 0 }, point: [0], source: 'suggested' },
      ]);
      const upd = (trialId: number, value: number, completedAt: string) => ({ trialId, expectedState: 'REQUESTED' as const, state: 'COMPLETED' as const, clientId: null, leaseExpiresAt: null, value, stderr: null, failureReason: null, late: false, completedAt });
      await commitTrials(s, 'ev', [], [upd(r2!, 1, at(5)), upd(r1!, 2.5, at(30))]);
      done.push({ trialId: r2!, value: 1, completedAt: at(5) }, { trialId: r1!, value: 2.5, completedAt: at(30) });
      expect(f1).toBeGreaterThan(0);

      const expected = expectedEvaluations(done, direction);
      expect(await allEvaluations(s, 'ev')).toEqual(expected);
      const steps = expected.filter((e) => e.improved);
      expect(await s.evaluationSummary('ev')).toEqual({ count: expected.length, best: steps[steps.length - 1] });
      expect(await s.listBestSteps('ev', { afterIndex: 0, throughIndex: expected.length, limit: 1000 })).toEqual(steps);
      // A window of the steps, and a limit.
      const mid = Math.floor(expected.length / 2);
      expect(await s.listBestSteps('ev', { afterIndex: 2, throughIndex: mid, limit: 1000 })).toEqual(steps.filter((e) => e.index > 2 && e.index <= mid));
      expect(await s.listBestSteps('ev', { afterIndex: 0, throughIndex: expected.length, limit: 1 })).toEqual(steps.slice(0, 1));
      expect(await s.evaluationsAt('ev', [1, 3, expected.length, expected.length + 5])).toEqual([expected[0], expected[2], expected[expected.length - 1]]);
      expect(await s.evaluationsAt('ev', [])).toEqual([]);
    });
  }

  it('evaluations of an imported study match the definition, and a study without results has none', async () => {
    const s = storage();
    await s.createStudy(study('empty'));
    expect(await s.evaluationSummary('empty')).toEqual({ count: 0, best: null });
    expect(await s.listEvaluations('empty', { afterIndex: 0, limit: 10 })).toEqual([]);
    const rnd = lcg(5);
    const done: Done[] = Array.from({ length: 40 }, (_, i) => ({ trialId: i + 1, value: Math.round(rnd() * 100) / 10, completedAt: at(Math.floor(rnd() * 30)) }));
    const trials = done.map((d) => ({
      trialId: d.trialId, state: 'COMPLETED' as const, generation: 0, clientId: null, leaseExpiresAt: null, parameters: { x: d.trialId }, point: [d.trialId],
      value: d.value, stderr: null, failureReason: null, late: false, source: 'external' as const, createdAt: at(0), completedAt: d.completedAt, updatedAt: d.completedAt,
    }));
    await s.importStudy({ ...study('imp'), generation: 0, updatedAt: at(0) }, trials, [], [], importedEvaluations(study('imp'), trials));
    expect(await allEvaluations(s, 'imp')).toEqual(expectedEvaluations(done, 'minimize'));
  });

  it('the most recently completed trials: the last `limit` in completion order, up to a time', async () => {
    const s = storage();
    await s.createStudy(study('rc'), { version: 1, state: { mean: [0] } });
    expect(await s.listRecentCompleted('rc', { limit: 5, completedBy: null })).toEqual([]);
    const rnd = lcg(21);
    const done: Done[] = [];
    let id = 0;
    for (let commit = 0; commit < 4; commit++) {
      // Times with ties and out of trial order; a FAILED and a REQUESTED trial that never count.
      const batch = Array.from({ length: 6 }, () => ({ trialId: ++id, value: rnd(), completedAt: at(Math.floor(rnd() * 15)) }));
      done.push(...batch);
      await commitTrials(s, 'rc', [...batch.map((d) => completed(d.trialId, d.value, d.completedAt)), { state: 'FAILED', generation: 0, parameters: { x: 0 }, point: [0], source: 'suggested' }, { state: 'REQUESTED', generation: 0, parameters: { x: 0 }, point: [0], source: 'suggested' }]);
      id += 2;
    }
    // By definition: COMPLETED by (completed_at, trial id), those completed by the time, the last `limit`.
    const order = expectedEvaluations(done, 'minimize').map((e) => done.find((d) => d.trialId === e.trialId)!);
    for (const [limit, by] of [[5, null], [100, null], [4, at(7)], [30, at(7)], [3, at(-1)], [3, at(0)]] as const) {
      const expected = order.filter((d) => by === null || d.completedAt <= by).slice(-limit);
      const got = await s.listRecentCompleted('rc', { limit, completedBy: by });
      expect(got.map((t) => [t.trialId, t.value, t.completedAt, t.state]), `limit ${limit}, by ${by}`).toEqual(expected.map((d) => [d.trialId, d.value, d.completedAt, 'COMPLETED']));
    }
  });

  it('engine states in generation pages', async () => {
    const s = storage();
    await s.createStudy(study('g'), { version: 1, state: { mean: [0] } });
    for (let g = 1; g <= 5; g++) {
      const head = await s.getEngineState('g');
      await s.commitGeneration('g', { expectedRevision: head!.revision, generation: g, engineState: { version: 1, state: { mean: [g] } }, newTrials: [], now: at(g) });
    }
    const p1 = await s.listEngineStatesPage('g', { afterGeneration: -1, limit: 4 });
    expect(p1.map((e) => e.generation)).toEqual([0, 1, 2, 3]);
    expect(p1[2]!.state).toEqual({ mean: [2] });
    expect((await s.listEngineStatesPage('g', { afterGeneration: 3, limit: 4 })).map((e) => e.generation)).toEqual([4, 5]);
  });

  it('leases that ran out: counted per study, and the trials list filters by state as the trials read', async () => {
    const s = storage();
    await s.createStudy(study('l'), { version: 1, state: { mean: [0] } });
    await s.createStudy(study('m'), { version: 1, state: { mean: [0] } });
    const leased = (lease: string | null): NewTrial => ({ state: 'ACTIVE', generation: 0, parameters: { x: 0 }, point: [0], source: 'suggested', clientId: 'w', leaseExpiresAt: lease });
    // Trial 1 ran out at 00:00:10, 2 at exactly now (expired: expiry is at or before now), 3 holds.
    await commitTrials(s, 'l', [leased(at(10_000)), leased(at(20_000)), leased(at(30_000)), { state: 'REQUESTED', generation: 0, parameters: { x: 0 }, point: [0], source: 'suggested' }]);
    await commitTrials(s, 'm', [leased(at(30_000))]);
    const now = at(20_000);
    expect(await s.expiredLeaseCounts(['l', 'm', 'nope'], now)).toEqual({ l: 2 });
    expect(await s.expiredLeaseCounts([], now)).toEqual({});
    const ids = async (state: 'REQUESTED' | 'ACTIVE', withNow: boolean) => (await s.listTrials('l', { after: null, limit: 10, state, ...(withNow ? { now } : {}) })).items.map((t) => t.trialId);
    expect(await ids('REQUESTED', true)).toEqual([1, 2, 4]);
    expect(await ids('ACTIVE', true)).toEqual([3]);
    // Without `now`: as stored.
    expect(await ids('REQUESTED', false)).toEqual([4]);
    expect(await ids('ACTIVE', false)).toEqual([1, 2, 3]);
    // Pages continue across the two kinds of REQUESTED.
    const first = await s.listTrials('l', { after: null, limit: 2, state: 'REQUESTED', now });
    expect(first.items.map((t) => t.trialId)).toEqual([1, 2]);
    expect((await s.listTrials('l', { after: first.next, limit: 2, state: 'REQUESTED', now })).items.map((t) => t.trialId)).toEqual([4]);
  });
}
