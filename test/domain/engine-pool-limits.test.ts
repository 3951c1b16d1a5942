/**
 * The engine's worker threads run with a bounded young generation (engine-pool.ts,
 * ENGINE_THREAD_YOUNG_GENERATION_MB): without it V8 lets a busy thread's semi-spaces grow to
 * 128 MiB, resident in the process's RSS.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ENGINE_THREAD_YOUNG_GENERATION_MB, WorkerEngineRunner } from '../../src/domain/pool/engine-pool.js';

const runners: WorkerEngineRunner[] = [];
afterEach(async () => {
  while (runners.length) await runners.pop()!.close();
});

describe('engine worker threads', () => {
  it('run with the young generation limited to ENGINE_THREAD_YOUNG_GENERATION_MB', async () => {
    const runner = new WorkerEngineRunner(2);
    runners.push(runner);
    // minThreads is 1: the pool starts one thread at once.
    const limits = runner.threadLimits();
    expect(limits.length).toBeGreaterThan(0);
    for (const l of limits) expect(l.maxYoungGenerationSizeMb).toBe(ENGINE_THREAD_YOUNG_GENERATION_MB);
    // The old generation is left to V8 (a study's largest model is bounded by its cost instead).
    for (const l of limits) expect(l.maxOldGenerationSizeMb ?? 0).not.toBe(ENGINE_THREAD_YOUNG_GENERATION_MB);
  });
});
