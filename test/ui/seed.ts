/**
 * Studies for the dashboard's browser tests and its benchmark, driven through the HTTP API of an
 * app built in process: the real suggest/observe loop for a few generations, or many external
 * observations at once (5,000 trials in five requests).
 */
import type { FastifyInstance } from 'fastify';

export const branin = (p: { x1: number; x2: number }) =>
  (p.x2 - (5.1 / (4 * Math.PI ** 2)) * p.x1 ** 2 + (5 / Math.PI) * p.x1 - 6) ** 2 + 10 * (1 - 1 / (8 * Math.PI)) * Math.cos(p.x1) + 10;
export const BRANIN_MIN = 0.397887;

export async function call(app: FastifyInstance, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) {
  const res = await app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }) });
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
  return res.json();
}

export const BRANIN_PARAMETERS = [
  { name: 'x1', type: 'float', bounds: [-5, 10], prior: { mean: 2.5, std: 3 } },
  { name: 'x2', type: 'float', bounds: [0, 15], prior: { mean: 7.5, std: 3 } },
  { name: 'lr', type: 'float', scale: 'log', bounds: [1e-4, 1], prior: { mean: -4.6, std: 1.5 } },
];

/** Branin in (x1, x2) plus a small penalty in ln lr (so lr matters, a little). */
export const objective = (p: { x1: number; x2: number; lr: number }) => branin(p) + 0.05 * (Math.log(p.lr) + 4.6) ** 2;

/** A study run through the loop for `generations` generations of `batch`; returns its id. */
export async function loopStudy(app: FastifyInstance, method: string, generations: number, extra: Record<string, unknown> = {}): Promise<string> {
  const batch = (extra.batch_size as number | undefined) ?? 4;
  const study = await call(app, 'POST', '/v1/studies', { name: `branin-${method}`, method, batch_size: batch, seed: 11, parameters: BRANIN_PARAMETERS, ...extra });
  for (let g = 0; g < generations; g++) {
    const s = await call(app, 'GET', `/v1/studies/${study.id}/suggestions?count=${batch}&client_id=w1`);
    // A categorical `opt`, when the study has one, adds 1 for 'sgd'.
    await call(app, 'POST', `/v1/studies/${study.id}/observations`, { observations: s.trials.map((t: { trial_id: number; parameters: { x1: number; x2: number; lr: number; opt?: string } }) => ({ trial_id: t.trial_id, value: objective(t.parameters) + (t.parameters.opt === 'sgd' ? 1 : 0) })) });
  }
  return study.id;
}

/** A random-search study holding `n` external observations of the objective (deterministic points). */
export async function bigStudy(app: FastifyInstance, n: number): Promise<string> {
  const study = await call(app, 'POST', '/v1/studies', { name: `big-${n}`, method: 'random', batch_size: 10, seed: 3, parameters: BRANIN_PARAMETERS, known_optimum: BRANIN_MIN });
  let s = 12345;
  const rand = () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  for (let done = 0; done < n; done += 1000) {
    const observations = Array.from({ length: Math.min(1000, n - done) }, () => {
      const p = { x1: -5 + 15 * rand(), x2: 15 * rand(), lr: 10 ** (-4 + 4 * rand()) };
      return { parameters: p, value: objective(p) };
    });
    await call(app, 'POST', `/v1/studies/${study.id}/observations`, { observations });
  }
  return study.id;
}

/** A study whose reported values fall from 28 to about 5e-32 over 60 evaluations: regret spanning 33 decades. */
export async function decadesStudy(app: FastifyInstance): Promise<string> {
  const study = await call(app, 'POST', '/v1/studies', { name: 'decades', method: 'cmaes', batch_size: 4, seed: 2, parameters: BRANIN_PARAMETERS, known_optimum: 0 });
  for (let g = 0; g < 15; g++) {
    const s = await call(app, 'GET', `/v1/studies/${study.id}/suggestions?count=4&client_id=w1`);
    await call(app, 'POST', `/v1/studies/${study.id}/observations`, {
      observations: s.trials.map((t: { trial_id: number }, k: number) => {
        const i = 4 * g + k;
        return { trial_id: t.trial_id, value: i === 0 ? 28 : 10 ** (-(i * 32.3) / 59) };
      }),
    });
  }
  return study.id;
}
