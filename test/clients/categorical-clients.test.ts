/**
 * Categorical parameters from both clients against the real server process: the TypeScript client's
 * typed calls (a study with a categorical parameter, suggestions holding choices, an external
 * observation by choice, the distribution's probabilities) and the Python client (Debian's
 * /usr/bin/python3, the client module from clients/python) doing the same loop.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProbnesClient, type StudySpec } from '../../clients/typescript/src/index.js';
import { startServer, type ServerProcess } from '../helpers/server-process.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-categorical-clients-'));
let server: ServerProcess;

beforeAll(async () => {
  server = await startServer(path.join(tmp, 'db.sqlite'), { env: { ENGINE_WORKERS: '1' } });
}, 60_000);

afterAll(async () => {
  await server?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const spec: StudySpec = {
  name: 'clients-categorical',
  method: 'prob-cmaes',
  batch_size: 3,
  seed: 5,
  parameters: [
    { name: 'optimizer', type: 'categorical', choices: ['adam', 'sgd', 'rmsprop'], prior: { probabilities: [0.6, 0.2, 0.2] } },
    { name: 'lr', scale: 'log', bounds: [1e-4, 1] },
  ],
};

describe('the TypeScript client', () => {
  it('creates a study with a categorical parameter, gets choices, observes by choice and reads the probabilities', async () => {
    const c = new ProbnesClient({ baseUrl: server.base });
    const study = await c.createStudy(spec);
    expect(study.parameters[0]).toEqual({ name: 'optimizer', type: 'categorical', choices: ['adam', 'sgd', 'rmsprop'], prior: { probabilities: [0.6, 0.2, 0.2] } });
    for (let g = 0; g < 3; g++) {
      const s = await c.suggest(study.id, { count: 3, clientId: 'ts' });
      for (const t of s.trials) expect(['adam', 'sgd', 'rmsprop']).toContain(t.parameters.optimizer);
      await c.observe(study.id, s.trials.map((t) => ({ trial_id: t.trial_id, value: (t.parameters.optimizer === 'sgd' ? 0 : 1) + Math.abs(Math.log10(t.parameters.lr as number) + 2) })));
    }
    await c.observe(study.id, [{ parameters: { optimizer: 'sgd', lr: 0.01 }, value: 0 }]);
    const best = await c.best(study.id);
    expect(best.observed?.parameters).toEqual({ optimizer: 'sgd', lr: 0.01 });
    const dist = await c.distribution(study.id);
    expect(dist.probabilities.optimizer!.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
  });
});

describe('the Python client', () => {
  it('runs the same loop with choices (Debian python3)', () => {
    const script = `
import json, math, sys
sys.path.insert(0, ${JSON.stringify(path.join(ROOT, 'clients', 'python'))})
import probnes_client
c = probnes_client.Client(${JSON.stringify(server.base)})
study = c.create_study(json.loads(${JSON.stringify(JSON.stringify(spec))}))
seen = set()
for g in range(3):
    trials = c.suggest(study["id"], count=3, client_id="py")["trials"]
    obs = []
    for t in trials:
        p = t["parameters"]
        seen.add(p["optimizer"])
        obs.append({"trial_id": t["trial_id"], "value": (0 if p["optimizer"] == "sgd" else 1) + abs(math.log10(p["lr"]) + 2)})
    c.observe(study["id"], obs)
c.observe(study["id"], [{"parameters": {"optimizer": "rmsprop", "lr": 0.01}, "value": -1}])
best = c.request("GET", "/v1/studies/%s/best" % study["id"])
print(json.dumps({"seen": sorted(seen), "best": best["observed"]["parameters"]}))
`;
    const r = spawnSync('/usr/bin/python3', ['-c', script], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as { seen: string[]; best: Record<string, unknown> };
    for (const v of out.seen) expect(['adam', 'sgd', 'rmsprop']).toContain(v);
    expect(out.best).toEqual({ optimizer: 'rmsprop', lr: 0.01 });
  });
});
