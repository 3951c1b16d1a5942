/**
 * Prometheus metrics at /metrics, one registry per app instance (so tests and several apps in one
 * process never share counters). Request metrics are labelled by the route *pattern*
 * (`/v1/studies/:study_id`), never the raw URL, to keep label cardinality bounded.
 * Suggestion and observation counts are labelled by the study's method, read from storage after
 * the response (the method never changes, so it is cached); engine time is measured by wrapping
 * the engine runner; study and lease gauges are queried from storage on each scrape.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { EngineRunner } from '../domain/pool/engine-pool.js';
import type { EngineTask } from '../domain/pool/engine-tasks.js';
import { EngineBusyError, type EngineCaller, type FairnessStats } from '../domain/pool/fair-runner.js';
import { dropUnusedSince, STUDY_STATES, type IdleForgetting, type LoopStats, type Operations } from '../domain/index.js';

const SUGGESTIONS_ROUTE = '/v1/studies/:study_id/suggestions';
const OBSERVATIONS_ROUTE = '/v1/studies/:study_id/observations';
/** Studies whose method is remembered; far more than a server has in flight, small in memory. */
const METHOD_CACHE_SIZE = 10_000;

export class Metrics {
  readonly registry = new Registry();
  readonly requests = new Counter({ name: 'probnes_http_requests_total', help: 'HTTP requests by method, route pattern and status code.', labelNames: ['method', 'route', 'status_code'], registers: [this.registry] });
  readonly latency = new Histogram({
    name: 'probnes_http_request_duration_seconds',
    help: 'HTTP request latency by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status_code'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly suggestions = new Counter({ name: 'probnes_suggested_trials_total', help: 'Trials returned by /suggestions (held leases sent again included), by study method.', labelNames: ['method'], registers: [this.registry] });
  readonly observations = new Counter({ name: 'probnes_observed_trials_total', help: 'Trials reported through /observations (identical re-sends included), by study method.', labelNames: ['method'], registers: [this.registry] });
  readonly engineTime = new Histogram({
    name: 'probnes_engine_compute_seconds',
    help: 'Engine compute time per call (excluding queueing for a worker), by method and operation.',
    labelNames: ['method', 'op'],
    // GP fits range from a millisecond (few points) to tens of seconds (BO with many candidates).
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  /**
   * Engine calls that threw. A failed update (tell) is retried on the next request and the study keeps
   * handing out points from its current distribution, so without this counter a study whose update
   * keeps failing would look healthy from outside; alert on its rate.
   */
  /** Engine calls refused because their tenant's or study's queue was full (answered 429 with Retry-After). */
  readonly engineRejected = new Counter({
    name: 'probnes_engine_rejected_total',
    help: "Engine calls refused (429) because the caller's queue was full or too long, by method and operation.",
    labelNames: ['method', 'op'],
    registers: [this.registry],
  });
  readonly engineFailures = new Counter({
    name: 'probnes_engine_failures_total',
    help: 'Engine calls that failed (the update is retried on the next request), by method and operation.',
    labelNames: ['method', 'op'],
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'probnes_' });
  }

  /** The same runner, recording each call's compute time. */
  meter(runner: EngineRunner): EngineRunner {
    const { engineTime, engineFailures, engineRejected } = this;
    return {
      async run(task: EngineTask, caller?: EngineCaller) {
        const labels = { method: 'method' in task ? task.method : 'none', op: task.op };
        let out;
        try {
          out = await runner.run(task, caller);
        } catch (err) {
          // A full queue is a refusal (429), not a failure of the engine.
          (err instanceof EngineBusyError ? engineRejected : engineFailures).inc(labels);
          throw err;
        }
        engineTime.observe(labels, out.ms / 1000);
        return out;
      },
      close: () => runner.close(),
    };
  }

  /** The fair scheduler's queue (fair-runner.ts), read when scraped. */
  addFairnessGauges(stats: () => FairnessStats): void {
    const figures = [
      ['probnes_engine_queued', 'Heavy engine calls waiting for a slot (all tenants).', 'queuedHeavy'],
      ['probnes_engine_running_heavy', 'Heavy engine calls computing now.', 'runningHeavy'],
      ['probnes_engine_running_light', 'Light engine calls (model-free methods) computing now.', 'runningLight'],
      ['probnes_engine_views_queued', 'Model views waiting for the views lane (all tenants).', 'queuedViews'],
      ['probnes_engine_views_running', 'Model views computing now.', 'runningViews'],
    ] as const;
    this.addFigureGauges(figures, (key) => stats()[key]);
  }

  /** The loop's storage reads and recomputations since start (LoopService.stats), read when scraped. */
  addLoopGauges(stats: () => LoopStats): void {
    const figures = [
      ['probnes_loop_loads', 'Loop request attempts that read their study from storage.', 'loads'],
      ['probnes_loop_warm_starts', "Loop request attempts that started from this process's last commit on the study instead of a read.", 'warmStarts'],
      ['probnes_loop_warm_discarded', 'Warm attempts done again from a read (another writer had changed the study, or nothing proved it current).', 'warmDiscarded'],
      ['probnes_loop_recomputes', 'Attempts done again because another writer changed the study during the request.', 'recomputes'],
      ['probnes_loop_history_reads', "Reads of a study's completed history (not in this process's cache).", 'historyReads'],
      ['probnes_loop_history_catch_ups', "Reads of only the results another writer completed since this process's cached history.", 'historyCatchUps'],
      ['probnes_study_cache_bytes', "Estimated bytes of the per-study cache (completed trials, their configuration keys, their history).", 'cacheBytes'],
    ] as const;
    this.addFigureGauges(figures, (key) => stats()[key]);
  }

  /** One gauge per (name, help, key) row, set when scraped to what `read(key)` returns then. */
  private addFigureGauges<K extends string>(figures: readonly (readonly [string, string, K])[], read: (key: K) => number): void {
    for (const [name, help, key] of figures) {
      new Gauge({ name, help, registers: [this.registry], collect() { this.set(read(key)); } });
    }
  }

  /** Gauges computed from storage when scraped (not kept up to date on every write). */
  addStorageGauges(ops: Operations, now: () => Date): void {
    // One read per scrape: both gauges below need it, and prom-client starts their collection
    // together, so the second shares the first's query while it is in flight. Forgotten as soon as
    // it settles (not a macrotask later: with an in-memory database and injected requests no
    // macrotask may run between two scrapes, and the next scrape would get this one's figures).
    let pending: Promise<Awaited<ReturnType<Operations['counts']>>> | null = null;
    const counts = () => {
      if (!pending) {
        const p = ops.counts(now());
        pending = p;
        const clear = () => {
          if (pending === p) pending = null;
        };
        p.then(clear, clear);
      }
      return pending;
    };
    new Gauge({
      name: 'probnes_studies',
      help: 'Studies by state (all tenants).',
      labelNames: ['state'],
      registers: [this.registry],
      async collect() {
        const c = await counts();
        for (const s of STUDY_STATES) this.set({ state: s }, c.studiesByState[s]);
      },
    });
    // PostgreSQL's connection pool (this replica's); absent for SQLite.
    if (ops.poolStats()) {
      const pool = () => ops.poolStats()!;
      const figures = [
        ['probnes_db_pool_connections', 'Database connections this process holds open (idle and busy).', 'total'],
        ['probnes_db_pool_idle', 'Idle database connections in this process\'s pool.', 'idle'],
        ['probnes_db_pool_waiting', 'Requests waiting for a database connection.', 'waiting'],
        ['probnes_db_pool_max', 'Largest pool size (DATABASE_POOL_SIZE).', 'max'],
        ['probnes_db_connection_errors', 'Database calls that found it unreachable, and idle connections lost, since start; the pool reconnects by itself.', 'errors'],
        ['probnes_db_statements', 'Statements (round trips) sent to the database since start.', 'statements'],
        ['probnes_db_commits', 'Generation commits since start.', 'commits'],
      ] as const;
      this.addFigureGauges(figures, (key) => pool()[key]);
      new Gauge({ name: 'probnes_db_commit_lock_seconds_sum', help: "Time commits held their study's row lock, summed, since start.", registers: [this.registry], collect() { this.set(pool().lockHeldMsSum / 1000); } });
      new Gauge({ name: 'probnes_db_commit_lock_seconds_max', help: "Longest a commit held its study's row lock since start.", registers: [this.registry], collect() { this.set(pool().lockHeldMsMax / 1000); } });
    }
    new Gauge({
      name: 'probnes_open_leases',
      help: 'ACTIVE trials whose lease has not expired (all tenants).',
      registers: [this.registry],
      async collect() {
        this.set((await counts()).openLeases);
      },
    });
  }
}

/** How many trials a successful loop response carried (set before serialisation). */
const trialCounts = new WeakMap<FastifyRequest, number>();

/**
 * Registers the metrics' hooks and route. Returns the study → method map's idle forgetting
 * (CACHE_IDLE_MS, domain/common/idle-sweep.ts): a forgotten study's method is read again by its
 * next request.
 */
export function registerMetrics(app: FastifyInstance, metrics: Metrics, ops: Operations, now: () => Date = () => new Date()): IdleForgetting {
  metrics.addStorageGauges(ops, now);
  // Study → method and when a request last asked; a use re-inserts its key, so the first key is the least recently used.
  const methods = new Map<string, { method: string; usedAt: number }>();

  async function methodOf(req: FastifyRequest): Promise<string | null> {
    const id = (req.params as { study_id?: string }).study_id;
    if (!id) return null;
    const key = `${req.tenantId}\u0000${id}`;
    const known = methods.get(key);
    if (known) {
      methods.delete(key);
      methods.set(key, { method: known.method, usedAt: now().getTime() });
      return known.method;
    }
    const method = await ops.studyMethod(req.tenantId, id);
    if (!method) return null;
    if (methods.size >= METHOD_CACHE_SIZE) methods.clear();
    methods.set(key, { method, usedAt: now().getTime() });
    return method;
  }

  app.addHook('preSerialization', async (req, reply, payload) => {
    const url = req.routeOptions.url;
    if ((url === SUGGESTIONS_ROUTE || url === OBSERVATIONS_ROUTE) && reply.statusCode === 200) {
      const trials = (payload as { trials?: unknown[] } | null)?.trials;
      if (Array.isArray(trials)) trialCounts.set(req, trials.length);
    }
    return payload;
  });

  app.addHook('onResponse', async (req, reply) => {
    // Unmatched URLs (404s, scanners) share one label instead of one series per URL.
    const route = req.routeOptions.url ?? 'unmatched';
    const labels = { method: req.method, route, status_code: String(reply.statusCode) };
    metrics.requests.inc(labels);
    metrics.latency.observe(labels, reply.elapsedTime / 1000);
    const n = trialCounts.get(req);
    if (n === undefined || n === 0) return;
    try {
      const method = await methodOf(req);
      if (!method) return;
      (route === SUGGESTIONS_ROUTE ? metrics.suggestions : metrics.observations).inc({ method }, n);
    } catch (err) {
      req.log.warn({ err }, 'metrics: could not read the study method');
    }
  });

  app.get('/metrics', { schema: { hide: true } }, async (_req, reply) => {
    const text = await metrics.registry.metrics();
    return reply.type(metrics.registry.contentType).send(text);
  });

  return {
    forgetIdle: (idleMs: number): number => dropUnusedSince(methods, now().getTime() - idleMs),
  };
}
