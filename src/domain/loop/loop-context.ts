/**
 * What every step of the loop is given for one request: the engine runner, where it logs what it
 * recovered from, and the request's time (generation.ts, no-repeat.ts, loop.ts).
 */
import type { EngineRunner } from '../pool/engine-pool.js';

/** Where the loop reports what it recovered from (a pino logger fits). */
export interface LoopLogger {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface LoopContext {
  runner: EngineRunner;
  log: LoopLogger;
  now: Date;
}
