/**
 * `probnes demo --function model-choice` refuses a method that cannot search categorical parameters
 * (src/cli/demo.ts, from the registry's `categorical` fact), with exit 2 and the methods that can. Every
 * registered method searches them now, so the refusal is checked on a stand-in: the registry describes
 * `xnes` without the fact here (the same seam as test/mutation/study-spec-rules.test.ts).
 */
import path from 'node:path';
import os from 'node:os';
import { describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.js';
import { getStrategy, registeredMethods } from '../../src/engine/index.js';

const STAND_IN = 'xnes';

vi.mock('../../src/engine/strategies/registry.js', async (importOriginal) => {
  const registry = await importOriginal<typeof import('../../src/engine/strategies/registry.js')>();
  return { ...registry, getStrategy: (name: string) => (name === 'xnes' ? { ...registry.getStrategy(name as never), categorical: undefined } : registry.getStrategy(name as never)) };
});

async function cli(argv: string[]) {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (s) => void (out += s), err: (s) => void (err += s), env: { ...process.env, DATABASE_PATH: path.join(os.tmpdir(), 'probnes-unused.db') }, cwd: os.tmpdir() });
  return { code, out, err };
}

describe('probnes demo --function model-choice and a method without categorical parameters', () => {
  it('is bad usage (exit 2) naming the methods that can, without starting a server', async () => {
    const able = registeredMethods().filter((m) => getStrategy(m).categorical === true);
    expect(able).not.toContain(STAND_IN);
    expect(able).toContain('prob-cmaes');
    const r = await cli(['demo', '--function', 'model-choice', '--method', STAND_IN]);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toContain(`--method: ${STAND_IN} does not search model-choice (it has categorical parameters); one of ${able.join(', ')}\n`);
  });

  it('leaves the help listing only the methods that can', async () => {
    const help = await cli(['demo', '--help']);
    expect(help.code).toBe(0);
    const listed = /only the methods that search categorical parameters: ([^)]*)\)/.exec(help.out.replace(/\s+/g, ' '))![1]!.split(', ');
    expect(listed).toContain('prob-xnes');
    expect(listed).not.toContain(STAND_IN);
  });
});
