/**
 * The metrics' study → method map (src/http/metrics.ts, the method label of the suggested and
 * observed trial counters) forgets, with CACHE_IDLE_MS, the studies no loop request used for the
 * limit (registerMetrics returns its forgetIdle, which app.ts hands to the idle sweep): a forgotten
 * study's method is read again by its next request, a study used within the limit is not.
 */
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import type { Operations } from '../../src/domain/index.js';
import { Metrics, registerMetrics } from '../../src/http/metrics.js';

describe('the metrics’ method labels forget idle studies', () => {
  it('drops a study unused for the limit (its method is read again), keeps one used within it', async () => {
    let t = Date.parse('2026-01-01T00:00:00Z');
    const reads: string[] = [];
    const ops = {
      studyMethod: async (_tenant: string, id: string) => (reads.push(id), 'cmaes'),
      counts: async () => ({ studies: {}, openLeases: 0 }),
      poolStats: () => null,
    } as unknown as Operations;
    const app = Fastify();
    app.decorateRequest('tenantId', 'A');
    const labels = registerMetrics(app, new Metrics(), ops, () => new Date(t));
    app.get('/v1/studies/:study_id/suggestions', async () => ({ trials: [{ trial_id: 1 }] }));
    const suggest = async (id: string) => expect((await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions` })).statusCode).toBe(200);
    try {
      await suggest('old');
      await suggest('used');
      await suggest('old');
      expect(reads).toEqual(['old', 'used']);
      t += 50_000;
      await suggest('used');
      t += 20_000;
      // 70 s since old's last request, 20 s since used's: a 60 s limit forgets old only.
      expect(labels.forgetIdle(60_000)).toBe(1);
      await suggest('used');
      expect(reads).toEqual(['old', 'used']);
      await suggest('old');
      expect(reads).toEqual(['old', 'used', 'old']);
      expect(labels.forgetIdle(60_000)).toBe(0);
    } finally {
      await app.close();
    }
  });
});
