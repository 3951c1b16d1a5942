/**
 * buildApp: the whole HTTP application, ready to `inject` or `listen`, but never listening itself
 * (src/server.ts owns the process). Tests build it with an in-memory database.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { serializerCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { IntermediateService, ModelViews, ReportsService, StudyService, StudyTransfer, type StudyServiceDeps } from './domain/index.js';
import { FairEngineRunner, type EngineRunner } from './domain/pool/engine-pool.js';
import { fairnessLimits } from './domain/pool/fair-runner.js';
import { InlineEngineRunner, LoopService, Operations, StudyCache, startIdleSweep } from './domain/index.js';
import { errorHandler, frameworkErrors, notFoundHandler, validatorCompiler } from './http/error-handler.js';
// Studies first: the OpenAPI components are listed in the order their schemas are first imported.
import { studyRoutes } from './http/routes/studies.js';
import { observationRoutes } from './http/routes/observations.js';
import { suggestionRoutes } from './http/routes/suggestions.js';
import { trialActionRoutes } from './http/routes/trial-actions.js';
import { Metrics, registerMetrics } from './http/metrics.js';
import { registerOpenApi } from './http/openapi.js';
import { healthRoutes } from './http/routes/health.js';
import { reportRoutes } from './http/routes/reports.js';
import { modelRoutes } from './http/routes/model.js';
import { IMPORT_BODY_LIMIT, studyTransferRoutes } from './http/routes/study-transfer.js';
import { trialReadRoutes } from './http/routes/trials.js';
import { intermediateRoutes } from './http/routes/intermediate.js';
import { uiRoutes } from './http/routes/ui.js';
import { methodRoutes } from './http/routes/methods.js';
import { registerTenant } from './http/tenant.js';
import { registerSecurity } from './http/security.js';
import { receiptTimeouts } from './http/receipt-timeouts.js';
import { requestLogger } from './http/logging.js';
import { Authenticator, type EnvApiKey } from './domain/auth/api-keys.js';
import type { Storage } from './storage/index.js';

export interface BuildAppOptions {
  /** `cacheIdleMs` unset: no idle expiry (tests); the server passes its configuration's. */
  config: Pick<Config, 'bodyLimit' | 'requestTimeoutMs'> & Partial<Pick<Config, 'rateLimitPerMinute' | 'rateLimitOpenLoopbackPerMinute' | 'connectionTimeoutMs' | 'keepAliveTimeoutMs' | 'engineWorkers' | 'engineQueue' | 'studyCostMax' | 'cacheIdleMs'>>;
  storage: Storage;
  /** A pino logger; omit (or false) for no logging, as in most tests. */
  logger?: Logger | false;
  /** Clock, id and seed sources for the study service (tests pin them). */
  service?: Omit<StudyServiceDeps, 'storage'>;
  /** Where engine calls run (worker pool or inline); /best predicts with it. */
  engine?: EngineRunner;
  /**
   * API keys from the environment, and whether a request without a key may act as the default
   * tenant while no key exists at all (src/server.ts decides; tests default to open).
   */
  auth?: { envKeys?: readonly EnvApiKey[]; allowOpen: boolean };
}

/** Client-supplied request ids are echoed (for tracing across services) if they look sane. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export async function buildApp(opts: BuildAppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    // Request lines without the credentials a client may have put in the query (src/http/logging.ts).
    ...(opts.logger ? { loggerInstance: requestLogger(opts.logger) as FastifyBaseLogger } : { logger: false }),
    bodyLimit: opts.config.bodyLimit,
    // Whole-request receipt bound (trickled bodies included): src/http/receipt-timeouts.ts.
    ...receiptTimeouts(opts.config.requestTimeoutMs),
    ...(opts.config.connectionTimeoutMs !== undefined ? { connectionTimeout: opts.config.connectionTimeoutMs } : {}),
    ...(opts.config.keepAliveTimeoutMs !== undefined ? { keepAliveTimeout: opts.config.keepAliveTimeoutMs } : {}),
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
    },
    logController: new LogController({ requestIdLogLabel: 'request_id' }),
    frameworkErrors,
    // Path ids may be as long as their schema allows (128, src/http/schemas/common.ts); the router's
    // default of 100 answered 414 to ids the schema accepts. Longer segments still get the 414.
    routerOptions: { maxParamLength: 128 },
  });

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler);
  app.addHook('onRequest', async (req, reply) => {
    reply.header('x-request-id', req.id);
  });
  await registerSecurity(app, { rateLimitPerMinute: opts.config.rateLimitPerMinute ?? 6000, rateLimitOpenLoopbackPerMinute: opts.config.rateLimitOpenLoopbackPerMinute ?? 0 });
  registerTenant(app, new Authenticator({ storage: opts.storage, envKeys: opts.auth?.envKeys ?? [], allowOpen: opts.auth?.allowOpen ?? true }));
  const metrics = new Metrics();
  const ops = new Operations(opts.storage);
  const metricLabels = registerMetrics(app, metrics, ops, opts.service?.now);

  await registerOpenApi(app);
  // Study creation (engine init) and the loop share one runner; inline when the caller gives none.
  // Fair engine time between tenants (pool/fair-runner.ts) in front of the pool or the inline runner.
  const fair = new FairEngineRunner(opts.engine ?? new InlineEngineRunner(), fairnessLimits(opts.config));
  metrics.addFairnessGauges(() => fair.scheduler.stats);
  const runner = metrics.meter(fair);
  // Study creation and import hold a study to the same cost limit (the services' default when unset).
  const costLimit = opts.config.studyCostMax ? { maxStudyCost: opts.config.studyCostMax } : {};
  const studies = new StudyService({ storage: opts.storage, engine: runner, ...costLimit, ...opts.service });
  await app.withTypeProvider<ZodTypeProvider>().register(healthRoutes, { ops });
  await app.withTypeProvider<ZodTypeProvider>().register(studyRoutes, { studies });
  await app.withTypeProvider<ZodTypeProvider>().register(methodRoutes);
  const reports = new ReportsService({ storage: opts.storage, engine: runner, now: opts.service?.now });
  const intermediate = new IntermediateService({ storage: opts.storage, now: opts.service?.now });
  await app.withTypeProvider<ZodTypeProvider>().register(trialReadRoutes, { reports, intermediate });
  await app.withTypeProvider<ZodTypeProvider>().register(intermediateRoutes, { intermediate });
  await app.withTypeProvider<ZodTypeProvider>().register(reportRoutes, { reports });
  const views = new ModelViews({ storage: opts.storage, engine: runner });
  await app.withTypeProvider<ZodTypeProvider>().register(modelRoutes, { views });
  const transfer = new StudyTransfer({ storage: opts.storage, engine: runner, ...costLimit, ...opts.service });
  await app.withTypeProvider<ZodTypeProvider>().register(studyTransferRoutes, { transfer, bodyLimit: Math.max(opts.config.bodyLimit, IMPORT_BODY_LIMIT) });
  // Warm snapshots where a load is a database round trip (several replicas check them at commit).
  const studyCache = new StudyCache();
  const loop = new LoopService({ storage: opts.storage, runner, now: opts.service?.now, log: app.log, warmSnapshots: opts.storage.kind === 'postgres', cache: studyCache });
  // What no request used for CACHE_IDLE_MS is forgotten (domain/common/idle-sweep.ts); the timer stops with the app.
  const sweep = startIdleSweep(opts.config.cacheIdleMs ?? 0, [studyCache, views.cache, reports, fair.scheduler, metricLabels]);
  if (sweep) app.addHook('onClose', async () => sweep.stop());
  metrics.addLoopGauges(() => loop.stats);
  await app.withTypeProvider<ZodTypeProvider>().register(suggestionRoutes, { loop });
  await app.withTypeProvider<ZodTypeProvider>().register(observationRoutes, { loop });
  await app.withTypeProvider<ZodTypeProvider>().register(trialActionRoutes, { loop });
  await app.register(uiRoutes);
  return app;
}
