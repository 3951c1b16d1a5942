/**
 * API benchmark against the real server process on loopback (a temporary database, the engine in
 * its worker pool as configured by ENGINE_WORKERS), measured with hrtime:
 *
 * 1. prob-cmaes at d = 2 and d = 10 with 150 observations in the study (150 external points, then
 *    the loop): each iteration reports a generation's results (POST observations: the update, i.e.
 *    the GP refit and the natural-gradient step) and then asks for the next batch (GET suggestions:
 *    batch-BQ selection from the new distribution). Both latencies are reported.
 * 2. Observation throughput: 8 concurrent clients posting external observations, batches of 1 and 100.
 * 3. /healthz latency while 4 studies compute (4 clients in a tight observe/suggest loop).
 *
 * Targets (2-core machine): suggestions p50 ≤ 250 ms at d = 2 with 150 points including the refit;
 * ≥ 1,000 observations/s; /healthz p99 ≤ 50 ms while 4 studies compute.
 * Usage: npm run bench:api [-- --quick] [--only loop|throughput|health] [--seconds 5] [--batch N] [--cpu-prof DIR] [--log-level L]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { processCpuSeconds, startServer } from '../test/helpers/server-process.js';
import { call, fmt, lcg, ms, objective, params, pct, randomPoint } from './lib/http-bench.js';

const quick = process.argv.includes('--quick');
/** `--only throughput` (or loop, health): one part, e.g. to compare a change to the commit path. */
const onlyAt = process.argv.indexOf('--only');
const only = onlyAt >= 0 ? process.argv[onlyAt + 1] : undefined;
if (only !== undefined && !['loop', 'throughput', 'health'].includes(only)) throw new Error(`--only takes loop, throughput or health, not ${only}`);
const runs = (part: string) => only === undefined || only === part;
/** `--seconds N`: duration of each throughput run (default 5, 2 with --quick). */
const secondsAt = process.argv.indexOf('--seconds');
const throughputSeconds = secondsAt >= 0 ? Number(process.argv[secondsAt + 1]) : quick ? 2 : 5;
if (!(throughputSeconds > 0)) throw new Error('--seconds takes a positive number');
/** `--batch N`: only that batch size in the throughput part (default: 1 and 100). */
const batchAt = process.argv.indexOf('--batch');
const batches = batchAt >= 0 ? [Number(process.argv[batchAt + 1])] : [1, 100];
if (!batches.every((b) => Number.isInteger(b) && b >= 1 && b <= 1000)) throw new Error('--batch takes an integer from 1 to 1000');
/** `--cpu-prof DIR`: the server writes V8 CPU profiles (main thread and workers) into DIR when it stops. */
const profAt = process.argv.indexOf('--cpu-prof');
const profDir = profAt >= 0 ? path.resolve(process.argv[profAt + 1] ?? '') : undefined;
/** `--log-level L`: the server's LOG_LEVEL (default warn; the production default is info, one line per request). */
const levelAt = process.argv.indexOf('--log-level');
const logLevel = levelAt >= 0 ? process.argv[levelAt + 1]! : 'warn';

async function createStudy(base: string, method: string, d: number, extra: Record<string, unknown> = {}) {
  return (await call(base, 'POST', '/v1/studies', { name: `bench-${method}-${d}`, method, seed: 1, parameters: params(d), ...extra })).id as string;
}

/** 1. Suggest/observe latency with ~150 observations in the study. */
async function loopLatency(base: string, d: number, iterations: number) {
  const id = await createStudy(base, 'prob-cmaes', d, { batch_size: 3 });
  const rnd = lcg(d);
  await call(base, 'POST', `/v1/studies/${id}/observations`, {
    observations: Array.from({ length: 150 }, () => {
      const parameters = randomPoint(d, rnd);
      return { parameters, value: objective(parameters) };
    }),
  });
  const suggest: number[] = [];
  const observe: number[] = [];
  let trials = (await call(base, 'GET', `/v1/studies/${id}/suggestions?count=3&client_id=bench`)).trials;
  for (let i = 0; i < iterations; i++) {
    const obs = trials.map((t: any) => ({ trial_id: t.trial_id, value: objective(t.parameters) }));
    let t0 = process.hrtime.bigint();
    const r = await call(base, 'POST', `/v1/studies/${id}/observations`, { observations: obs });
    observe.push(ms(t0));
    if (r.generation !== i + 1) throw new Error(`expected generation ${i + 1}, got ${r.generation}`);
    t0 = process.hrtime.bigint();
    trials = (await call(base, 'GET', `/v1/studies/${id}/suggestions?count=3&client_id=bench`)).trials;
    suggest.push(ms(t0));
  }
  const n = 150 + 3 * iterations;
  return { d, suggest, observe, n };
}

/** CPU seconds of each thread of a process (Linux /proc; null elsewhere), user and system time apart. */
async function threadCpu(pid: number): Promise<Map<number, { name: string; user: number; sys: number }> | null> {
  try {
    const out = new Map<number, { name: string; user: number; sys: number }>();
    for (const tid of await fs.promises.readdir(`/proc/${pid}/task`)) {
      const stat = await fs.promises.readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // utime and stime (fields 14 and 15) in clock ticks of 100 Hz.
      out.set(Number(tid), { name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), user: Number(f[11]) / 100, sys: Number(f[12]) / 100 });
    }
    return out;
  } catch {
    return null;
  }
}

/** Where the CPU went between two threadCpu readings, per observation: the main thread (user+sys) and the others. */
function cpuSplit(pid: number, a: Awaited<ReturnType<typeof threadCpu>>, b: Awaited<ReturnType<typeof threadCpu>>, count: number): string {
  if (!a || !b) return '';
  let mainUser = 0;
  let mainSys = 0;
  const others = new Map<string, { user: number; sys: number }>();
  for (const [tid, t1] of b) {
    const t0 = a.get(tid) ?? { user: 0, sys: 0 };
    const user = t1.user - t0.user;
    const sys = t1.sys - t0.sys;
    if (tid === pid) {
      mainUser += user;
      mainSys += sys;
    } else {
      others.set(`${t1.name}[${tid}]`, { user, sys });
    }
  }
  const per = (s: number) => ((s * 1000) / count).toFixed(3);
  // Other threads by id (worker threads and V8's helpers all share the name "node"), the busiest first.
  const rest = [...others]
    .filter(([, t]) => t.user + t.sys > 0)
    .sort((x, y) => y[1].user + y[1].sys - x[1].user - x[1].sys)
    .map(([name, t]) => `${name} ${per(t.user)} + ${per(t.sys)}`);
  return `; user + sys: main thread ${per(mainUser)} + ${per(mainSys)}, ${rest.join(', ')} ms/obs`;
}

/** 2. Observations per second with 8 concurrent clients, external points. */
async function throughput(base: string, pid: number, batch: number, seconds: number) {
  const d = 2;
  const id = await createStudy(base, 'random', d, { batch_size: 1 });
  let count = 0;
  const latencies: number[] = [];
  const end = Date.now() + seconds * 1000;
  const t0 = process.hrtime.bigint();
  // The server's CPU time per observation does not depend on how busy the rest of the machine is, unlike its rate.
  const cpu0 = await processCpuSeconds(pid);
  const threads0 = await threadCpu(pid);
  // The benchmark's own clients run on the same cores: their CPU per observation bounds the rate too.
  const client0 = process.cpuUsage();
  await Promise.all(
    Array.from({ length: 8 }, async (_, c) => {
      const rnd = lcg(100 + c);
      while (Date.now() < end) {
        const observations = Array.from({ length: batch }, () => {
          const parameters = randomPoint(d, rnd);
          return { parameters, value: objective(parameters) };
        });
        const t = process.hrtime.bigint();
        await call(base, 'POST', `/v1/studies/${id}/observations`, { observations });
        latencies.push(ms(t));
        count += batch;
      }
    }),
  );
  const cpu1 = await processCpuSeconds(pid);
  const client = process.cpuUsage(client0);
  const threads1 = await threadCpu(pid);
  const cpuMsPerObservation = cpu0 === null || cpu1 === null ? null : ((cpu1 - cpu0) * 1000) / count;
  return { batch, perSecond: count / (ms(t0) / 1000), count, latencies, cpuMsPerObservation, split: cpuSplit(pid, threads0, threads1, count), clientMsPerObservation: (client.user + client.system) / 1000 / count };
}

/** 3. /healthz while 4 studies compute. */
async function healthUnderLoad(base: string, seconds: number) {
  const ids = await Promise.all([0, 1, 2, 3].map(() => createStudy(base, 'prob-cmaes', 4, { batch_size: 3 })));
  let stop = false;
  let cycles = 0;
  const workers = ids.map(async (id) => {
    while (!stop) {
      const s = await call(base, 'GET', `/v1/studies/${id}/suggestions?count=3&client_id=w`);
      await call(base, 'POST', `/v1/studies/${id}/observations`, { observations: s.trials.map((t: any) => ({ trial_id: t.trial_id, value: objective(t.parameters) })) });
      cycles++;
    }
  });
  await new Promise((r) => setTimeout(r, 1000)); // let the studies get going (history grows)
  const lat: number[] = [];
  const end = Date.now() + seconds * 1000;
  while (Date.now() < end) {
    const t0 = process.hrtime.bigint();
    const res = await fetch(`${base}/healthz`);
    await res.arrayBuffer();
    lat.push(ms(t0));
    await new Promise((r) => setTimeout(r, 20));
  }
  stop = true;
  await Promise.all(workers);
  return { lat, cycles };
}

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-bench-api-'));
  // No rate limit: the benchmark measures the loop, and its clients send far more than one key's per-minute quota.
  const server = await startServer(path.join(tmp, 'bench.db'), {
    // The server's stdout (its log) goes to /dev/null.
    env: { RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: logLevel },
    stderr: 'inherit',
    ...(profDir ? { nodeArgs: ['--cpu-prof', '--cpu-prof-dir', profDir] } : {}),
  });
  const base = server.base;
  const health = await call(base, 'GET', '/readyz');
  const rows: string[] = [];
  try {
    console.log(`# bench:api — ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), node ${process.version}, schema ${health.schema_version}${quick ? ', --quick' : ''}\n`);
    rows.push('| measurement | p50 (ms) | p99 (ms) | other | target |', '|---|---|---|---|---|');
    for (const d of runs('loop') ? [2, 10] : []) {
      const r = await loopLatency(base, d, quick ? 8 : 30);
      rows.push(`| prob-cmaes d=${d}: GET suggestions after an update (batch-BQ ask), n=150→${r.n} | ${fmt(pct(r.suggest, 50))} | ${fmt(pct(r.suggest, 99))} | ${r.suggest.length} requests | ${d === 2 ? 'p50 ≤ 250 (with refit)' : ''} |`);
      rows.push(`| prob-cmaes d=${d}: POST observations completing a generation (GP refit + update) | ${fmt(pct(r.observe, 50))} | ${fmt(pct(r.observe, 99))} | ${r.observe.length} requests | |`);
      const cycle = r.suggest.map((s, i) => s + r.observe[i]!);
      rows.push(`| prob-cmaes d=${d}: one generation, observe + suggest | ${fmt(pct(cycle, 50))} | ${fmt(pct(cycle, 99))} | | ${d === 2 ? '≤ 250' : ''} |`);
    }
    for (const batch of runs('throughput') ? batches : []) {
      const r = await throughput(base, server.pid, batch, throughputSeconds);
      const cpu = r.cpuMsPerObservation === null ? '' : `, server CPU ${r.cpuMsPerObservation.toFixed(3)} ms/obs${r.split}; bench client CPU ${r.clientMsPerObservation.toFixed(3)} ms/obs`;
      rows.push(`| observations, batch of ${batch}, 8 clients (per-request latency) | ${fmt(pct(r.latencies, 50))} | ${fmt(pct(r.latencies, 99))} | **${Math.round(r.perSecond)} obs/s** (${r.count} in total${cpu}) | ≥ 1,000 obs/s |`);
    }
    const h = runs('health') ? await healthUnderLoad(base, quick ? 3 : 8) : null;
    if (h) rows.push(`| /healthz while 4 prob-cmaes studies (d=4) compute | ${fmt(pct(h.lat, 50))} | ${fmt(pct(h.lat, 99))} | ${h.lat.length} probes, ${h.cycles} generations meanwhile | p99 ≤ 50 |`);
    console.log(rows.join('\n'));
  } finally {
    await server.stop('SIGTERM');
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

await main();
