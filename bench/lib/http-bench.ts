/**
 * What the HTTP benchmarks (api.ts, load.ts) share: JSON calls against the server, percentiles,
 * a seeded generator, and the cheap test function the simulated clients evaluate.
 */
export const json = { 'content-type': 'application/json' };

/** Milliseconds since `t0` (process.hrtime.bigint()). */
export const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;

/** The p-th percentile by the nearest-rank rule (xs need not be sorted). */
export function pct(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export const fmt = (x: number) => x.toFixed(1);

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    what: string,
  ) {
    super(`${what}: ${status} ${JSON.stringify(body)}`);
  }
}

/** One JSON request; a non-2xx answer throws HttpError with its status and body. */
export async function call(base: string, method: string, url: string, body?: unknown): Promise<any> {
  const res = await fetch(base + url, { method, ...(body ? { headers: json, body: JSON.stringify(body) } : {}) });
  const out = res.status === 204 ? null : await res.json();
  if (!res.ok) throw new HttpError(res.status, out, `${method} ${url}`);
  return out;
}

/** Shifted sphere-plus-cosine test function in any dimension (cheap, multimodal). */
export const objective = (p: Record<string, number>) => Object.values(p).reduce((s, x) => s + (x - 1) ** 2 - Math.cos(3 * x), 0);

/** d parameters x0..x{d-1} in [−5, 5]. */
export function params(d: number) {
  return Array.from({ length: d }, (_, i) => ({ name: `x${i}`, bounds: [-5, 5] }));
}

export function randomPoint(d: number, rnd: () => number): Record<string, number> {
  return Object.fromEntries(Array.from({ length: d }, (_, i) => [`x${i}`, -5 + 10 * rnd()]));
}

/** A small seeded generator (Numerical Recipes LCG): reproducible client behaviour, not statistics. */
export function lcg(seed: number) {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

/**
 * Polls `${base}/healthz` every 10 ms until stopped, timing each answer (and handing it to `onPoll`):
 * a read that blocks the server's event loop shows in these waits, whoever asked it.
 */
export function pollHealth(base: string, onPoll: (ms: number) => void = () => undefined): { stop: () => Promise<number[]> } {
  const health: number[] = [];
  let polling = true;
  const poller = (async () => {
    while (polling) {
      const t = process.hrtime.bigint();
      await (await fetch(`${base}/healthz`)).arrayBuffer();
      const took = ms(t);
      health.push(took);
      onPoll(took);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  return {
    stop: async () => {
      polling = false;
      await poller;
      return health;
    },
  };
}
