/**
 * The TypeScript client's side of several objectives, constraints and infeasible points
 * (docs/multi-objective.md): the bodies it sends and the pages it follows, against a scripted fetch;
 * then the same calls against the real app (in-process, listening on a free port), where the
 * expected front and hypervolumes are worked out by hand from the contract's definitions.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProbnesClient, ProbnesError, resultFields, type Progress, type StudySpec } from '../../clients/typescript/src/index.js';
import { makeTestApp } from '../helpers/app.js';

interface Seen {
  method: string;
  url: string;
  body: unknown;
}

/** A fetch that answers each request with the next scripted body (200, JSON) and records what was asked. */
function scripted(answers: unknown[]): { fetch: typeof fetch; seen: Seen[] } {
  const seen: Seen[] = [];
  const queue = [...answers];
  const f = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(String(input));
    seen.push({ method: init?.method ?? 'GET', url: url.pathname + url.search, body: init?.body ? JSON.parse(String(init.body)) : undefined });
    if (queue.length === 0) throw new Error(`no scripted answer for ${url}`);
    return new Response(JSON.stringify(queue.shift()), { status: 200, headers: { 'content-type': 'application/json' } });
  }) as typeof fetch;
  return { fetch: f, seen };
}

describe('several objectives against a scripted server', () => {
  it('front() and iterFront() follow every page; frontHistory() and iterFrontHistory() too', async () => {
    const ref = { value: [1.1, 1.1], derived: false };
    const pages = [
      { trials: [{ trial_id: 3 }, { trial_id: 1 }], reference_point: ref, hypervolume: 0.5, evaluation_count: 9, feasible_count: 8, next_page_token: 'p2' },
      { trials: [{ trial_id: 7 }], reference_point: ref, hypervolume: 0.5, evaluation_count: 9, feasible_count: 8, next_page_token: null },
    ];
    const s = scripted([...pages, ...pages]);
    const c = new ProbnesClient({ baseUrl: 'http://stub.invalid', fetch: s.fetch });
    const front = await c.front('s/1', { pageSize: 2 });
    expect(front.trials.map((t) => t.trial_id)).toEqual([3, 1, 7]);
    expect([front.hypervolume, front.reference_point, front.next_page_token]).toEqual([0.5, ref, null]);
    const ids: number[] = [];
    for await (const t of c.iterFront('s/1', 2)) ids.push(t.trial_id);
    expect(ids).toEqual([3, 1, 7]);
    const twoPages = ['/v1/studies/s%2F1/front?page_size=2', '/v1/studies/s%2F1/front?page_size=2&page_token=p2'];
    expect(s.seen.map((x) => x.url)).toEqual([...twoPages, ...twoPages]);

    const points = [
      { reference_point: ref, points: [{ index: 0, trial_id: 1, hypervolume: 0.1, front_size: 1 }], next_page_token: 'h2' },
      { reference_point: ref, points: [{ index: 1, trial_id: 2, hypervolume: 0.3, front_size: 2 }], next_page_token: null },
    ];
    const h = scripted([...points, ...points]);
    const ch = new ProbnesClient({ baseUrl: 'http://stub.invalid', fetch: h.fetch });
    const history = await ch.frontHistory('s1', { pageSize: 1 });
    expect(history.points.map((p) => [p.index, p.hypervolume])).toEqual([[0, 0.1], [1, 0.3]]);
    expect(history.next_page_token).toBeNull();
    const sizes: number[] = [];
    for await (const p of ch.iterFrontHistory('s1', 1)) sizes.push(p.front_size);
    expect(sizes).toEqual([1, 2]);
    expect(h.seen[1].url).toBe('/v1/studies/s1/front/history?page_size=1&page_token=h2');
  });

  it('observeValues, observeInfeasible and a trial handle send the fields as given', async () => {
    const answer = { trials: [{ trial_id: 1, state: 'COMPLETED' }], study_state: 'ACTIVE' };
    const s = scripted([answer, answer, answer, answer]);
    const c = new ProbnesClient({ baseUrl: 'http://stub.invalid', fetch: s.fetch });
    await c.observeValues('s', 1, [0.5, 2], [-1, 0.25]);
    await c.observeInfeasible('s', 2);
    const t = c.trialHandle('s', { trial_id: 3, parameters: {} } as never);
    await t.completeValues([1, 2]);
    await t.infeasible();
    expect(s.seen.map((x) => x.body)).toEqual([
      { observations: [{ trial_id: 1, values: [0.5, 2], constraints: [-1, 0.25] }] },
      { observations: [{ trial_id: 2, infeasible: true }] },
      { observations: [{ trial_id: 3, values: [1, 2] }] },
      { observations: [{ trial_id: 3, infeasible: true }] },
    ]);
    await expect(c.observeValues('s', 1, [1, Number.NaN])).rejects.toThrow(RangeError);
  });

  it('resultFields: a number is value, an array values, an object passes its fields; anything non-finite fails the trial', () => {
    expect(resultFields(1.5)).toEqual({ fields: { value: 1.5 } });
    expect(resultFields([1, 2])).toEqual({ fields: { values: [1, 2] } });
    expect(resultFields({ values: [1, 2], constraints: [0.1] })).toEqual({ fields: { values: [1, 2], constraints: [0.1] } });
    expect(resultFields({ infeasible: true })).toEqual({ fields: { infeasible: true } });
    expect(resultFields(Number.NaN)).toEqual({ reason: 'objective returned NaN' });
    expect(resultFields([1, Infinity])).toEqual({ reason: 'objective returned values [1, Infinity]' });
    expect(resultFields({ values: [1], constraints: [Number.NaN] })).toEqual({ reason: 'objective returned constraints [null]' });
    expect(resultFields({ valu: 1 })).toEqual({ reason: 'objective returned unknown fields valu' });
    expect(resultFields('1')).toEqual({ reason: 'objective returned string' });
  });

  it('optimize(): an objective returning an array reports values, { infeasible: true } an infeasible point, and there is no single best', async () => {
    const study = { id: 's', batch_size: 3, method: 'prob-cmaes', lease_seconds: 60 };
    const suggested = (i: number) => ({ trials: [{ trial_id: i, parameters: { x: 0.1 * i } }], reason: null });
    const told = (i: number, extra: object) => ({ trials: [{ trial_id: i, state: 'COMPLETED', loss: null, ...extra }], study_state: 'ACTIVE' });
    const best = { observed: null, front: { size: 1, hypervolume: 0.4 } };
    const s = scripted([
      study,
      suggested(1),
      told(1, { values: [0.1, 0.9], losses: [0.1, 0.9], feasible: true, infeasible: false }),
      suggested(2),
      told(2, { values: null, losses: null, feasible: false, infeasible: true }),
      study,
      best,
    ]);
    const c = new ProbnesClient({ baseUrl: 'http://stub.invalid', fetch: s.fetch });
    const results: unknown[] = [[0.1, 0.9], { infeasible: true }];
    const seen: Progress[] = [];
    const r = await c.optimize(() => results.shift() as never, 's', { budget: 2, workers: 1, heartbeatSeconds: 0, onProgress: (p) => seen.push(p) });
    const posts = s.seen.filter((x) => x.method === 'POST').map((x) => x.body);
    expect(posts).toEqual([{ observations: [{ values: [0.1, 0.9], trial_id: 1 }] }, { observations: [{ infeasible: true, trial_id: 2 }] }]);
    expect([r.completed, r.failed, r.best]).toEqual([2, 0, best]);
    expect(seen.map((p) => [p.value, p.values, p.best, p.infeasible])).toEqual([
      [null, [0.1, 0.9], null, false],
      [null, null, null, true],
    ]);
  });
});

describe('several objectives against the real app', () => {
  let app: FastifyInstance;
  let base = '';
  beforeAll(async () => {
    app = (await makeTestApp()).app;
    base = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await app.close();
  });

  it('a study of two objectives and a constraint: trial fields, the front, its hypervolume and history, and the 400s', async () => {
    const c = new ProbnesClient({ baseUrl: base, maxRetries: 0 });
    // prob-cmaes searches several objectives with constraints (ALGORITHM.md §32; a method that cannot is refused at /method).
    const spec: StudySpec = {
      name: 'ts-multi',
      method: 'prob-cmaes',
      parameters: [{ name: 'x', bounds: [0, 1] }],
      objectives: [
        { name: 'error', direction: 'minimize' },
        { name: 'speed', direction: 'maximize' },
      ],
      constraints: [{ name: 'memory_over' }],
      reference_point: [10, 0],
    };
    const study = await c.createStudy(spec);
    expect([study.objectives, study.constraints, study.reference_point, study.direction]).toEqual([spec.objectives, spec.constraints, [10, 0], 'minimize']);
    // (error, speed, memory_over) per trial; D violates the constraint, E cannot be evaluated.
    const results: Record<string, [number[], number[]] | null> = { A: [[1, 2], [-1]], B: [[2, 5], [0]], C: [[3, 4], [-0.5]], D: [[0.5, 10], [1]], E: null, F: [[4, 6], [-2]] };
    const ids: Record<string, number> = {};
    for (const [name, result] of Object.entries(results)) {
      const trial = (await c.suggest(study.id, { clientId: 'ts-multi' })).trials[0];
      ids[name] = trial.trial_id;
      const told = result === null ? await c.observeInfeasible(study.id, trial.trial_id) : await c.observeValues(study.id, trial.trial_id, result[0], result[1]);
      expect(told.trials[0].state).toBe('COMPLETED');
    }
    const [a, d, e] = await Promise.all(['A', 'D', 'E'].map((k) => c.getTrial(study.id, ids[k])));
    // losses: the values as the methods minimise them (the maximised speed negated).
    expect([a.value, a.values, a.losses, a.constraints, a.feasible, a.infeasible]).toEqual([null, [1, 2], [1, -2], [-1], true, false]);
    expect([d.values, d.losses, d.constraints, d.feasible]).toEqual([[0.5, 10], [0.5, -10], [1], false]);
    expect([e.values, e.feasible, e.infeasible]).toEqual([null, false, true]);

    // The feasible trials that no other feasible one is at least as good as in every objective and better
    // in one: A, B, F (C is dominated by B; D is infeasible however good), by error.
    const front = await c.front(study.id, { pageSize: 2 });
    expect(front.trials.map((t) => t.trial_id)).toEqual([ids.A, ids.B, ids.F]);
    expect(front.reference_point).toEqual({ value: [10, 0], derived: false });
    expect([front.evaluation_count, front.feasible_count]).toEqual([6, 4]);
    // Losses (1,−2), (2,−5), (4,−6) up to (10, 0), swept over the first objective: 1·2 + 2·5 + 6·6 = 48.
    expect(front.hypervolume).toBeCloseTo(48, 9);
    const best = await c.best(study.id);
    expect(best.observed).toBeNull();
    expect(best.front?.size).toBe(3);
    expect(best.front?.hypervolume).toBeCloseTo(48, 9);
    expect(front.front_size).toBe(3);

    // After each completed trial: A alone 9·2 = 18; with B 1·2 + 8·5 = 42; C, D, E change nothing; F 48.
    const history = await c.frontHistory(study.id, { pageSize: 4 });
    expect(history.points.map((p) => p.trial_id)).toEqual(['A', 'B', 'C', 'D', 'E', 'F'].map((k) => ids[k]));
    expect(history.points.map((p) => p.front_size)).toEqual([1, 2, 2, 2, 2, 3]);
    expect(history.points.map((p) => p.index)).toEqual([1, 2, 3, 4, 5, 6]); // results so far, 1-based
    history.points.forEach((p, i) => expect(p.hypervolume).toBeCloseTo([18, 42, 42, 42, 42, 48][i], 9));
    const paged = [];
    for await (const p of c.iterFrontHistory(study.id, 1)) paged.push(p);
    expect(paged).toEqual(history.points);

    const trial = (await c.suggest(study.id, { clientId: 'ts-multi' })).trials[0];
    const wrongCount = (await c.observeValues(study.id, trial.trial_id, [1], [0]).catch((err: unknown) => err)) as ProbnesError;
    expect(wrongCount).toBeInstanceOf(ProbnesError);
    expect(wrongCount.errors.map((x) => x.path)).toContain('/observations/0/values');
  });

  it('optimize() with an objective returning two values: every trial is on the front when none dominates another', async () => {
    const c = new ProbnesClient({ baseUrl: base, maxRetries: 0 });
    const spec: StudySpec = {
      name: 'ts-multi-optimize',
      method: 'prob-cmaes',
      seed: 4,
      parameters: [{ name: 'x', bounds: [0, 1] }],
      objectives: [
        { name: 'f1', direction: 'minimize' },
        { name: 'f2', direction: 'minimize' },
      ],
    };
    const r = await c.optimize((p) => [p.x as number, (1 - (p.x as number)) ** 2], spec, { budget: 8, workers: 2 });
    expect(r.completed).toBe(8);
    const trials = [];
    for await (const t of c.iterTrials(r.study.id, 'COMPLETED')) trials.push(t);
    for (const t of trials) expect(t.values).toEqual([t.parameters.x, (1 - (t.parameters.x as number)) ** 2]);
    // f2 falls strictly as f1 rises, so no point dominates another: all 8 are on the front.
    expect(r.best.front?.size).toBe(8);
    const onFront = [];
    for await (const t of c.iterFront(r.study.id)) onFront.push(t.trial_id);
    expect(onFront.sort((x, y) => x - y)).toEqual(trials.map((t) => t.trial_id).sort((x, y) => x - y));
  });
});
