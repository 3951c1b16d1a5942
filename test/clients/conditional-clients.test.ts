/**
 * Conditional parameters from both clients against the real server process: the TypeScript
 * client's typed spec with `condition`, suggestions holding the active parameters only, an external
 * observation without the inactive ones, and an inactive one refused at its pointer; the Python
 * client (Debian's /usr/bin/python3, clients/python) running `optimize` on the same space.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProbnesClient, ProbnesError, type StudySpec } from '../../clients/typescript/src/index.js';
import { startServer, type ServerProcess } from '../helpers/server-process.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-conditional-clients-'));
let server: ServerProcess;

beforeAll(async () => {
  server = await startServer(path.join(tmp, 'db.sqlite'), { env: { ENGINE_WORKERS: '1' } });
}, 60_000);

afterAll(async () => {
  await server?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const spec: StudySpec = {
  name: 'clients-conditional',
  method: 'prob-cmaes',
  batch_size: 3,
  seed: 5,
  parameters: [
    { name: 'kernel', type: 'categorical', choices: ['linear', 'rbf', 'poly'] },
    { name: 'C', scale: 'log', bounds: [1e-3, 1e3] },
    { name: 'gamma', scale: 'log', bounds: [1e-4, 10], condition: { parent: 'kernel', values: ['rbf'] } },
    { name: 'degree', type: 'int', bounds: [2, 5], condition: { parent: 'kernel', values: ['poly'] } },
  ],
};
const active = (p: Record<string, unknown>) => ['kernel', 'C', ...(p.kernel === 'rbf' ? ['gamma'] : []), ...(p.kernel === 'poly' ? ['degree'] : [])].sort();

describe('the TypeScript client', () => {
  it('creates a conditional study, gets the active parameters and observes by them', async () => {
    const c = new ProbnesClient({ baseUrl: server.base });
    const study = await c.createStudy(spec);
    expect(study.parameters[2]!.condition).toEqual({ parent: 'kernel', values: ['rbf'] });
    for (let g = 0; g < 3; g++) {
      const s = await c.suggest(study.id, { count: 3, clientId: 'ts' });
      for (const t of s.trials) expect(Object.keys(t.parameters).sort()).toEqual(active(t.parameters));
      await c.observe(study.id, s.trials.map((t) => ({ trial_id: t.trial_id, value: Math.abs(Math.log10(t.parameters.C as number)) + (t.parameters.kernel === 'rbf' ? 0 : 1) })));
    }
    await c.observe(study.id, [{ parameters: { kernel: 'poly', C: 1, degree: 3 }, value: 0.5 }]);
    const err = await c.observe(study.id, [{ parameters: { kernel: 'linear', C: 1, degree: 3 }, value: 0.5 }]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProbnesError);
    expect(JSON.stringify((err as ProbnesError).problem)).toContain('/observations/0/parameters/degree');
  });
});

describe('the Python client', () => {
  it('optimizes a conditional space, its objective seeing the active parameters only (Debian python3)', () => {
    const script = `
import json, math, sys
sys.path.insert(0, ${JSON.stringify(path.join(ROOT, 'clients', 'python'))})
import probnes_client
c = probnes_client.Client(${JSON.stringify(server.base)})
spec = json.loads(${JSON.stringify(JSON.stringify({ ...spec, name: 'py-conditional' }))})
seen = []
def objective(p):
    seen.append(sorted(p))
    return abs(math.log10(p["C"])) + (abs(math.log10(p["gamma"]) + 1) if p["kernel"] == "rbf" else 1)
result = c.optimize(objective, spec, budget=12, workers=1)
print(json.dumps({"seen": seen}))
`;
    const r = spawnSync('/usr/bin/python3', ['-c', script], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as { seen: string[][] };
    expect(out.seen.length).toBe(12);
    for (const names of out.seen) {
      const kernelOf = names.includes('gamma') ? 'rbf' : names.includes('degree') ? 'poly' : 'linear';
      expect(names).toEqual(active({ kernel: kernelOf }));
    }
  });
});
