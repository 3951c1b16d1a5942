/**
 * The `loss` the API reports next to values (src/domain/results lossOf): the value when the study
 * minimises, its negation when it maximises, so that clients and the dashboard rank results by it
 * without the direction. On every trial resource (observations, the trial list, one trial, the
 * suggestions and trial actions) and on the model grid (loss[iy][ix] against mean[iy][ix]).
 */
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { injectOk, makeTestApp, studyBody } from '../helpers/app.js';

let app: FastifyInstance;
beforeEach(async () => {
  ({ app } = await makeTestApp());
});
afterEach(async () => {
  await app.close();
});

const call = (method: 'GET' | 'POST', url: string, payload?: object) => injectOk(app, method, url, payload);

describe('loss', () => {
  for (const direction of ['minimize', 'maximize'] as const) {
    it(`${direction}: trials carry the value oriented so that lower is better, and ranking by it ranks best first`, async () => {
      const { id } = await call('POST', '/v1/studies', studyBody({ direction, method: 'random', batch_size: 4, seed: 2 }));
      const sign = direction === 'maximize' ? -1 : 1;
      const { trials } = await call('GET', `/v1/studies/${id}/suggestions?count=4&client_id=w`);
      expect(trials.map((t: { loss: number | null }) => t.loss)).toEqual([null, null, null, null]);
      const values = [0.5, -2, 3, 1];
      const observed = await call('POST', `/v1/studies/${id}/observations`, { observations: trials.map((t: { trial_id: number }, i: number) => ({ trial_id: t.trial_id, value: values[i] })) });
      expect(observed.trials.map((t: { loss: number }) => t.loss)).toEqual(values.map((v) => sign * v));
      const list = (await call('GET', `/v1/studies/${id}/trials`)).trials as { trial_id: number; value: number; loss: number }[];
      const bestFirst = [...list].sort((a, b) => a.loss - b.loss).map((t) => t.value);
      expect(bestFirst).toEqual(direction === 'minimize' ? [-2, 0.5, 1, 3] : [3, 1, 0.5, -2]);
      expect((await call('GET', `/v1/studies/${id}/best`)).observed.value).toBe(bestFirst[0]);
      expect((await call('GET', `/v1/studies/${id}/trials/${list[2]!.trial_id}`)).loss).toBe(sign * 3);
      const more = (await call('GET', `/v1/studies/${id}/suggestions?count=1&client_id=w2`)).trials[0];
      expect((await call('POST', `/v1/studies/${id}/trials/${more.trial_id}/heartbeat`, {})).loss).toBeNull();
      expect((await call('POST', `/v1/studies/${id}/trials/${more.trial_id}/fail`, { reason: 'x' })).loss).toBeNull();
      // The model grid: the mean and its loss, the best cell where the loss is lowest.
      const grid = await call('GET', `/v1/studies/${id}/model/grid?x=x&y=lr&n=5`);
      const mean = (grid.mean as number[][]).flat();
      const loss = (grid.loss as number[][]).flat();
      expect(loss).toEqual(mean.map((m) => sign * m + 0));
      const best = mean[loss.indexOf(Math.min(...loss))]!;
      expect(best).toBe(direction === 'minimize' ? Math.min(...mean) : Math.max(...mean));
    });
  }
});
