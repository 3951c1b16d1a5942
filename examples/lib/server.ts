/**
 * What every example needs: a server to talk to. With PROBNES_URL set, the examples connect there
 * (sending PROBNES_API_KEY as the Bearer key, if given); otherwise they start a server in this
 * process on a free loopback port, over a SQLite file in a temporary directory that is removed
 * when the example ends. The in-process server runs its engine calls on one worker thread, so the
 * objective (on the main thread) and the GP fits do not wait for each other.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pino from 'pino';
import { buildApp } from '../../src/app.js';
import { createEngineRunner } from '../../src/domain/index.js';
import { SqliteStorage } from '../../src/storage/index.js';
import { numericParameters, type Objective, type OptimizeResult, printProgress, ProbnesClient, type Study, type StudySpec } from '../../clients/typescript/src/index.js';

export interface Connection {
  client: ProbnesClient;
  baseUrl: string;
  /** Stops the in-process server and removes its database (nothing to do for PROBNES_URL). */
  close(): Promise<void>;
}

export async function connect(): Promise<Connection> {
  const url = process.env.PROBNES_URL;
  if (url) {
    return { client: new ProbnesClient({ baseUrl: url, apiKey: process.env.PROBNES_API_KEY || undefined }), baseUrl: url, close: async () => {} };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-example-'));
  const storage = SqliteStorage.open(path.join(dir, 'probnes.db'));
  const engine = createEngineRunner(1);
  // Warnings and errors only (an unexpected server error is logged with its stack), on stderr.
  const logger = pino({ level: process.env.LOG_LEVEL || 'warn', base: { service: 'probnes-example-server' } }, pino.destination(2));
  const app = await buildApp({ config: { bodyLimit: 1024 * 1024, requestTimeoutMs: 30_000 }, storage, engine, logger });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('the in-process server has no TCP address');
  const baseUrl = `http://127.0.0.1:${address.port}`;
  return {
    client: new ProbnesClient({ baseUrl }),
    baseUrl,
    close: async () => {
      await app.close();
      await engine.close();
      await storage.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A positive integer from the environment (e.g. EXAMPLE_BUDGET), or the default. */
export function intFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1) {
    process.stderr.write(`${name} must be a positive integer, got ${JSON.stringify(raw)}\n`);
    process.exit(2);
  }
  return n;
}

/** True when the module is the program being run (so tests can import an example's functions). */
export function isMain(moduleUrl: string): boolean {
  return process.argv[1] !== undefined && moduleUrl === pathToFileURL(path.resolve(process.argv[1])).href;
}

/** Runs an example's main, closing the connection however it ends; exit code 1 on an error. */
export async function runExample(main: (conn: Connection) => Promise<void>): Promise<void> {
  const conn = await connect();
  try {
    await main(conn);
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  } finally {
    await conn.close();
  }
}

/** A point as `name=value` pairs, ints without decimals (a categorical parameter's choice as it is). */
export function formatPoint(p: Record<string, number | string | boolean>): string {
  return Object.entries(p)
    .map(([k, v]) => `${k}=${typeof v !== 'number' || Number.isInteger(v) ? String(v) : v.toPrecision(4)}`)
    .join(', ');
}

/** A point whose parameters are all numeric (every example's), as numbers: the client's numericParameters. */
export const numericPoint = numericParameters;

/** How one example runs its study: the budget and workers (EXAMPLE_BUDGET, EXAMPLE_WORKERS), and what it prints. */
export interface StudyExample<P> {
  spec: StudySpec;
  objective: Objective<P>;
  defaults: { budget: number; workers: number };
  /** Worker names are `<clientIdPrefix>-<k>`. */
  clientIdPrefix: string;
  /** What one evaluation is, for the first line ("150 episodes by 3 workers"). */
  unit?: string;
  /** Appended to the first line (the study as the server echoes it). */
  headSuffix?: (study: Study) => string;
  /** Lines printed after the first, before the loop starts. */
  intro?: () => string[];
  /** Appended to the `N evaluations (F failed) in Ts` line. */
  countSuffix?: (result: OptimizeResult) => string;
  /** The lines after it: the best point and anything the example checks. */
  report: (result: OptimizeResult) => string[];
}

/**
 * The loop every example runs: a study from the spec with batch_size = workers (one generation per
 * round of workers), the client's optimize() with a progress line per result on stderr, then the
 * summary lines the tests read (`N evaluations (F failed)`, `best value V … at name=value, …`).
 */
export async function runStudyExample<P>(ex: StudyExample<P>): Promise<void> {
  const budget = intFromEnv('EXAMPLE_BUDGET', ex.defaults.budget);
  const workers = intFromEnv('EXAMPLE_WORKERS', ex.defaults.workers);
  await runExample(async ({ client, baseUrl }) => {
    const study = await client.createStudy({ ...ex.spec, batch_size: workers });
    console.log(`study ${study.id} on ${baseUrl}: ${budget} ${ex.unit ?? 'evaluations'} by ${workers} workers (${study.method})${ex.headSuffix?.(study) ?? ''}`);
    for (const line of ex.intro?.() ?? []) console.log(line);
    const result = await client.optimize<P>(ex.objective, study.id, { budget, workers, clientIdPrefix: ex.clientIdPrefix, onProgress: printProgress });
    console.log(`${result.completed} evaluations (${result.failed} failed) in ${(result.elapsedMs / 1000).toFixed(1)}s${ex.countSuffix?.(result) ?? ''}`);
    for (const line of ex.report(result)) console.log(line);
  });
}

