/** /metrics: request, loop, engine and storage metrics in the Prometheus text format. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Metrics } from '../../src/http/metrics.js';
import type { EngineTask } from '../../src/domain/pool/engine-tasks.js';
import { makeTestApp, studyBody, type TestApp } from '../helpers/app.js';

let t: TestApp;
beforeEach(async () => {
  t = await makeTestApp();
});
afterEach(async () => {
  await t.app.close();
  await t.storage.close();
});

async function scrape(): Promise<string> {
  const res = await t.app.inject({ method: 'GET', url: '/metrics' });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.body;
}

/** The value of one series, e.g. sample(text, 'probnes_studies{state="ACTIVE"}'); null when absent. */
function sample(text: string, series: string): number | null {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : null;
}

describe('/metrics', () => {
  it('counts requests by route pattern and status, never by raw URL', async () => {
    await t.app.inject({ method: 'GET', url: '/v1/studies/abc' });
    await t.app.inject({ method: 'GET', url: '/v1/studies/def' });
    await t.app.inject({ method: 'GET', url: '/no/such/thing' });
    const text = await scrape();
    expect(sample(text, 'probnes_http_requests_total{method="GET",route="/v1/studies/:study_id",status_code="404"}')).toBe(2);
    expect(sample(text, 'probnes_http_requests_total{method="GET",route="unmatched",status_code="404"}')).toBe(1);
    expect(sample(text, 'probnes_http_request_duration_seconds_count{method="GET",route="/v1/studies/:study_id",status_code="404"}')).toBe(2);
    expect(text).not.toContain('/v1/studies/abc');
    expect(text).not.toContain('/no/such/thing');
  });

  it('counts suggested and observed trials per method, engine time per method, studies by state and open leases', async () => {
    const created = await t.app.inject({ method: 'POST', url: '/v1/studies', payload: studyBody({ method: 'cmaes', batch_size: 4 }) });
    expect(created.statusCode).toBe(201);
    const id = (created.json() as { id: string }).id;
    const other = await t.app.inject({ method: 'POST', url: '/v1/studies', payload: studyBody({ method: 'random', name: 'paused' }) });
    await t.app.inject({ method: 'PATCH', url: `/v1/studies/${(other.json() as { id: string }).id}`, payload: { state: 'PAUSED' } });

    const s = await t.app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=3&client_id=w1` });
    expect(s.statusCode).toBe(200);
    const trials = (s.json() as { trials: { trial_id: number }[] }).trials;
    expect(trials).toHaveLength(3);
    const o = await t.app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: [{ trial_id: trials[0]!.trial_id, value: 1.5 }] } });
    expect(o.statusCode).toBe(200);

    const text = await scrape();
    expect(sample(text, 'probnes_suggested_trials_total{method="cmaes"}')).toBe(3);
    expect(sample(text, 'probnes_observed_trials_total{method="cmaes"}')).toBe(1);
    // One init per created study, at least one ask for the suggestions.
    expect(sample(text, 'probnes_engine_compute_seconds_count{method="cmaes",op="init"}')).toBe(1);
    expect(sample(text, 'probnes_engine_compute_seconds_count{method="random",op="init"}')).toBe(1);
    expect(sample(text, 'probnes_engine_compute_seconds_count{method="cmaes",op="ask"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'probnes_studies{state="ACTIVE"}')).toBe(1);
    expect(sample(text, 'probnes_studies{state="PAUSED"}')).toBe(1);
    expect(sample(text, 'probnes_studies{state="COMPLETED"}')).toBe(0);
    expect(sample(text, 'probnes_open_leases')).toBe(2);
  });

  it('reads the storage counts once per scrape, and again at the next scrape', async () => {
    let calls = 0;
    const read = t.storage.operationalCounts.bind(t.storage);
    t.storage.operationalCounts = (now) => {
      calls++;
      return read(now);
    };
    expect(sample(await scrape(), 'probnes_studies{state="ACTIVE"}')).toBe(0);
    // Two gauges (studies by state, open leases) from one read.
    expect(calls).toBe(1);
    await t.app.inject({ method: 'POST', url: '/v1/studies', payload: studyBody({ method: 'random' }) });
    const text = await scrape();
    expect(calls).toBe(2);
    expect(sample(text, 'probnes_studies{state="ACTIVE"}')).toBe(1);
  });

  it("counts the loop's storage reads: every request a load on SQLite (no warm starts), no recomputes", async () => {
    const created = await t.app.inject({ method: 'POST', url: '/v1/studies', payload: studyBody({ method: 'random', batch_size: 2 }) });
    const id = (created.json() as { id: string }).id;
    for (let i = 0; i < 3; i++) {
      const s = await t.app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=1&client_id=w` });
      const [trial] = (s.json() as { trials: { trial_id: number }[] }).trials;
      await t.app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: [{ trial_id: trial!.trial_id, value: i }] } });
    }
    const text = await scrape();
    expect(sample(text, 'probnes_loop_loads')).toBe(6);
    expect(sample(text, 'probnes_loop_warm_starts')).toBe(0);
    expect(sample(text, 'probnes_loop_warm_discarded')).toBe(0);
    expect(sample(text, 'probnes_loop_recomputes')).toBe(0);
    // The first engine call reads the (empty) history; later ones find it in the cache.
    expect(sample(text, 'probnes_loop_history_reads')).toBe(1);
    // One writer: never behind its own cache. The cache holds the three results (and their keys).
    expect(sample(text, 'probnes_loop_history_catch_ups')).toBe(0);
    expect(sample(text, 'probnes_study_cache_bytes')).toBeGreaterThan(3 * 100);
  });

  it('does not count failed loop requests', async () => {
    await t.app.inject({ method: 'GET', url: '/v1/studies/missing/suggestions' });
    const text = await scrape();
    expect(text).not.toMatch(/^probnes_suggested_trials_total\{/m);
    expect(sample(text, 'probnes_http_requests_total{method="GET",route="/v1/studies/:study_id/suggestions",status_code="404"}')).toBe(1);
  });

  it('counts engine calls that fail, by method and operation, and passes the error on', async () => {
    const m = new Metrics();
    const failing = m.meter({ run: () => Promise.reject(new Error('not positive definite')), close: async () => {} });
    const task = { op: 'tell', method: 'prob-cmaes' } as unknown as EngineTask;
    await expect(failing.run(task)).rejects.toThrow('not positive definite');
    await expect(failing.run(task)).rejects.toThrow('not positive definite');
    const text = await m.registry.metrics();
    expect(sample(text, 'probnes_engine_failures_total{method="prob-cmaes",op="tell"}')).toBe(2);
    expect(sample(text, 'probnes_engine_compute_seconds_count{method="prob-cmaes",op="tell"}')).toBeNull();
  });

  it('keeps one registry per app instance', async () => {
    const other = await makeTestApp();
    try {
      await other.app.inject({ method: 'GET', url: '/healthz' });
      const text = await scrape();
      expect(sample(text, 'probnes_http_requests_total{method="GET",route="/healthz",status_code="200"}')).toBeNull();
    } finally {
      await other.app.close();
      await other.storage.close();
    }
  });
});
