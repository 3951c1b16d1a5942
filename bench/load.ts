/**
 * Load test against the real server process: N studies × M concurrent clients for a fixed time.
 * Each client loops suggest → evaluate a cheap test function → observe, moving to another study
 * every round so that all studies get traffic; the studies cycle through a mix of methods (ProbNES
 * and baselines). Prints requests/s, observations/s, latency percentiles per route, errors by
 * status, and the server's memory (RSS from /proc/<pid>/status, JS heap from /metrics) at the
 * start, the peak and the end. Exits 1 on any error (5xx, an unexpected 4xx, a dropped connection).
 *
 * With `--storage postgres` the server runs on PostgreSQL (a database created for the run and dropped
 * after it, on the server at --database-url), as `--replicas N` processes sharing it. With
 * `--routing study` (the default) every request of a study goes to one replica, chosen by
 * rendezvous hashing of the study id as the deployment's Caddy does (docker/Caddyfile.scale; the
 * same policy, hashed here in the load generator rather than through a Caddy process that would
 * take CPU from the two cores); with `--routing round-robin` each client sends its requests to the
 * replicas in turn, so that a study's requests alternate between them (the worst case for the
 * replicas' caches). Also prints generations/s (engine updates, summed over
 * the studies) and, for PostgreSQL, the statements (round trips) per request and how long commits
 * held their study's row lock, from the replicas' /metrics.
 *
 * Usage: npm run bench:load -- [--studies 50] [--clients 32] [--seconds 60] [--methods a,b,…]
 *        [--dim 2] [--batch 4] [--options '{"candidates":64}'] [--storage sqlite|postgres]
 *        [--replicas 1] [--engine-workers N] [--history 0] [--database-url postgres://postgres@127.0.0.1:5432/postgres]
 *        [--routing study|round-robin] [--caddy] [--cpu-prof DIR] [--out DIR]
 *
 * `--caddy` (PostgreSQL) sends every request through the machine's caddy with the deployment's
 * docker/Caddyfile.scale (study affinity by its header policy) instead of hashing in the load
 * generator, and counts Caddy's CPU with the rest.
 *
 * `--out DIR` also writes what it printed to DIR/results.md (with the commit, the command and the load
 * average) and the run's figures to DIR/runs.jsonl.gz (bench/lib/provenance.ts).
 *
 * `--history N` gives every study N external observations (uniform points in the box) before the
 * timed phase, so its generations cost what a long-running study's do: with a few hundred points the
 * engine, not HTTP or the database, is what limits generations per second (the engine-bound runs).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { freePort } from '../test/helpers/free-port.js';
import { processCpuSeconds, processMemory, startServer, type ServerProcess } from '../test/helpers/server-process.js';
import { call, fmt, HttpError, lcg, ms, objective, params, pct, randomPoint } from './lib/http-bench.js';
import { currentProvenance, describeProvenance, writePublished } from './lib/provenance.js';

const DEFAULT_METHODS = ['prob-cmaes', 'prob-xnes', 'prob-snes', 'cmaes', 'xnes', 'snes', 'random'];

const { values: v } = parseArgs({
  options: {
    studies: { type: 'string', default: '50' },
    clients: { type: 'string', default: '32' },
    seconds: { type: 'string', default: '60' },
    methods: { type: 'string', default: DEFAULT_METHODS.join(',') },
    dim: { type: 'string', default: '2' },
    batch: { type: 'string', default: '4' },
    options: { type: 'string' },
    storage: { type: 'string', default: 'sqlite' },
    replicas: { type: 'string', default: '1' },
    'engine-workers': { type: 'string' },
    history: { type: 'string', default: '0' },
    'database-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
    'cpu-prof': { type: 'string' },
    out: { type: 'string' },
    routing: { type: 'string', default: 'study' },
    caddy: { type: 'boolean', default: false },
  },
});
const positive = (name: string, s: string) => {
  const n = Number(s);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} takes a positive integer, not ${s}`);
  return n;
};
const cfg = {
  studies: positive('studies', v.studies),
  clients: positive('clients', v.clients),
  seconds: positive('seconds', v.seconds),
  methods: v.methods.split(',').map((m) => m.trim()).filter(Boolean),
  dim: positive('dim', v.dim),
  batch: positive('batch', v.batch),
  options: v.options ? (JSON.parse(v.options) as Record<string, unknown>) : null,
  storage: v.storage === 'postgres' || v.storage === 'sqlite' ? v.storage : (() => { throw new Error(`--storage takes sqlite or postgres, not ${v.storage}`); })(),
  replicas: positive('replicas', v.replicas),
  engineWorkers: v['engine-workers'],
  history: v.history === '0' ? 0 : positive('history', v.history),
  databaseUrl: v['database-url'],
  /** A directory for the servers' V8 CPU profiles (node --cpu-prof), written when they exit; scripts/cpu-profile-summary.ts reads them. */
  cpuProf: v['cpu-prof'],
  caddy: v.caddy,
  out: v.out,
  routing: v.routing === 'study' || v.routing === 'round-robin' ? v.routing : (() => { throw new Error(`--routing takes study or round-robin, not ${v.routing}`); })(),
};
if (cfg.caddy && cfg.storage !== 'postgres') throw new Error('--caddy needs --storage postgres');
if (cfg.storage === 'sqlite' && cfg.replicas > 1) throw new Error('--replicas > 1 needs --storage postgres (several processes cannot share one SQLite file)');

interface Stats {
  latency: Map<string, number[]>;
  errors: Map<string, number>;
  observations: number;
  suggested: number;
}

function record(stats: Stats, route: string, t0: bigint): void {
  let l = stats.latency.get(route);
  if (!l) stats.latency.set(route, (l = []));
  l.push(ms(t0));
}

function fail(stats: Stats, route: string, err: unknown): void {
  const what = err instanceof HttpError ? `${route} → ${err.status} ${(err.body as { code?: string } | null)?.code ?? ''}` : `${route} → ${(err as Error).message}`;
  stats.errors.set(what, (stats.errors.get(what) ?? 0) + 1);
}

async function createStudies(base: string): Promise<{ id: string; method: string }[]> {
  const out: { id: string; method: string }[] = [];
  for (let i = 0; i < cfg.studies; i++) {
    const method = cfg.methods[i % cfg.methods.length]!;
    const body = { name: `load-${i}-${method}`, method, seed: i + 1, batch_size: cfg.batch, parameters: params(cfg.dim), ...(cfg.options ? { options: cfg.options } : {}) };
    const id = (await call(base, 'POST', '/v1/studies', body)).id as string;
    if (cfg.history > 0) {
      const rnd = lcg(77 + i);
      const observations = Array.from({ length: cfg.history }, () => {
        const parameters = randomPoint(cfg.dim, rnd);
        return { parameters, value: objective(parameters) };
      });
      await call(base, 'POST', `/v1/studies/${id}/observations`, { observations });
    }
    out.push({ id, method });
  }
  return out;
}

/**
 * The timed phase's requests: node:http on kept-alive connections rather than fetch, whose per
 * request CPU (about 1.3 ms here) was a quarter of the machine's work per request on two shared
 * cores; the load generator is not the system under test. Same contract as `call`.
 */
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
function send(base: string, method: 'GET' | 'POST', url: string, body?: unknown): Promise<any> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(base + url, { method, agent, headers: payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        let out: unknown = null;
        try {
          out = status === 204 ? null : JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch (err) {
          return reject(err);
        }
        if (status < 200 || status >= 300) reject(new HttpError(status, out, `${method} ${url}`));
        else resolve(out);
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** FNV-1a, 32 bits: a cheap, well-spread hash of a short string. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** The replica a study's requests go to: highest hash of (replica, study id), as Caddy's header policy picks one. */
function replicaFor(studyId: string, bases: readonly string[]): string {
  let best = bases[0]!;
  let bestHash = -1;
  for (const b of bases) {
    const h = fnv1a(`${b}${studyId}`);
    if (h > bestHash) [best, bestHash] = [b, h];
  }
  return best;
}

/** One client: suggest → evaluate → observe, a different study each round. */
async function client(bases: string[], studies: { id: string }[], c: number, end: number, stats: Stats): Promise<void> {
  const rnd = lcg(1000 + c);
  for (let round = 0; Date.now() < end; round++) {
    const id = studies[(c + round * cfg.clients + Math.floor(rnd() * 3)) % studies.length]!.id;
    // Round robin: replicas in turn, so one study's suggestion and observation usually land on different ones.
    let sent = c + round;
    const base = cfg.routing === 'study' ? () => replicaFor(id, bases) : () => bases[sent++ % bases.length]!;
    let t0 = process.hrtime.bigint();
    let trials: { trial_id: number; parameters: Record<string, number> }[];
    try {
      trials = (await send(base(), 'GET', `/v1/studies/${id}/suggestions?count=1&client_id=load-${c}`)).trials;
      record(stats, 'GET suggestions', t0);
    } catch (err) {
      fail(stats, 'GET suggestions', err);
      continue;
    }
    stats.suggested += trials.length;
    if (trials.length === 0) continue;
    const observations = trials.map((t) => ({ trial_id: t.trial_id, value: objective(t.parameters) }));
    t0 = process.hrtime.bigint();
    try {
      await send(base(), 'POST', `/v1/studies/${id}/observations`, { observations });
      record(stats, 'POST observations', t0);
      stats.observations += observations.length;
    } catch (err) {
      fail(stats, 'POST observations', err);
    }
  }
}

interface Memory {
  rssMiB: number;
  heapUsedMiB: number;
}

/** RSS from /proc (exact, Linux), heap from the server's own /metrics (prom-client's default metrics). */
async function memory(server: ServerProcess): Promise<Memory> {
  const proc = await processMemory(server.pid);
  const text = await (await fetch(`${server.base}/metrics`)).text();
  const metric = (name: string) => Number(new RegExp(`^${name} ([0-9.e+]+)`, 'm').exec(text)?.[1] ?? NaN);
  const rss = proc?.rssMiB ?? metric('probnes_process_resident_memory_bytes') / 2 ** 20;
  return { rssMiB: rss, heapUsedMiB: metric('probnes_nodejs_heap_size_used_bytes') / 2 ** 20 };
}

/** The database figures one replica's /metrics gives (PostgreSQL only). */
async function dbFigures(server: ServerProcess): Promise<{ statements: number; commits: number; lockSum: number; lockMax: number }> {
  const text = await (await fetch(`${server.base}/metrics`)).text();
  const metric = (name: string) => Number(new RegExp(`^${name} ([0-9.e+-]+)`, 'm').exec(text)?.[1] ?? NaN);
  return { statements: metric('probnes_db_statements'), commits: metric('probnes_db_commits'), lockSum: metric('probnes_db_commit_lock_seconds_sum'), lockMax: metric('probnes_db_commit_lock_seconds_max') };
}

interface CpuSample {
  servers: number;
  /** Per server: its main thread's and its engine worker threads' CPU seconds (named probnes-engine), from /proc/<pid>/task. */
  threads: { main: number; engine: number }[];
  /** CPU seconds per database backend pid (backends come and go with pooled connections). */
  backends: Map<number, number>;
  /** CPU seconds per PostgreSQL process that serves no client: the postmaster, WAL writer, checkpointer, background writer, autovacuum. */
  auxiliary: Map<number, number>;
  client: number;
  /** Caddy's CPU seconds (--caddy), else 0. */
  proxy: number;
  /** The whole machine's busy CPU seconds (/proc/stat: all but idle and iowait), whatever process used them. */
  machine: number;
}

const ticks = (stat: string) => {
  // Fields after the parenthesised command name; utime and stime are fields 14 and 15, in clock ticks (100 Hz on Linux).
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
};

/** A server process's main thread and engine worker threads, CPU seconds (zeros where /proc is absent). */
async function threadCpu(pid: number): Promise<{ main: number; engine: number }> {
  const out = { main: 0, engine: 0 };
  let tids: string[] = [];
  try {
    tids = await fs.promises.readdir(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const [comm, stat] = await Promise.all([fs.promises.readFile(`/proc/${pid}/task/${tid}/comm`, 'utf8'), fs.promises.readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8')]);
      if (tid === String(pid)) out.main += ticks(stat);
      else if (comm.trim() === 'probnes-engine') out.engine += ticks(stat);
    } catch {
      // the thread ended
    }
  }
  return out;
}

async function machineBusy(): Promise<number> {
  try {
    const cpu = (await fs.promises.readFile('/proc/stat', 'utf8')).split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal (guest time is already in user)
    const total = cpu.slice(0, 8).reduce((a, x) => a + x, 0);
    return (total - cpu[3]! - cpu[4]!) / 100;
  } catch {
    return NaN;
  }
}

/** CPU seconds used so far by the server processes (worker threads included), this run's database processes, this process and the machine. */
async function cpuNow(servers: ServerProcess[], pgPids: () => Promise<{ backends: number[]; auxiliary: number[] }>, proxyPid: number | null): Promise<CpuSample> {
  const perServer = await Promise.all(servers.map((s) => processCpuSeconds(s.pid)));
  const threads = await Promise.all(servers.map((s) => threadCpu(s.pid)));
  const pids = await pgPids();
  const cpuOf = async (list: number[]) => new Map(await Promise.all(list.map(async (p) => [p, (await processCpuSeconds(p)) ?? 0] as const)));
  const [backends, auxiliary] = await Promise.all([cpuOf(pids.backends), cpuOf(pids.auxiliary)]);
  const u = process.cpuUsage();
  const proxy = proxyPid === null ? 0 : ((await processCpuSeconds(proxyPid)) ?? 0);
  return { servers: perServer.reduce<number>((a, x) => a + (x ?? 0), 0), threads, backends, auxiliary, client: (u.user + u.system) / 1e6, proxy, machine: await machineBusy() };
}

interface CpuSpent {
  servers: number;
  main: number;
  engine: number;
  database: number;
  auxiliary: number;
  client: number;
  proxy: number;
  machine: number;
}

/** CPU seconds between two samples; a process first seen in the second sample counts from zero. */
function cpuSpent(a: CpuSample, b: CpuSample): CpuSpent {
  const grown = (x: Map<number, number>, y: Map<number, number>) => {
    let sum = 0;
    for (const [pid, s] of y) sum += s - (x.get(pid) ?? 0);
    return sum;
  };
  const sum = (f: (t: { main: number; engine: number }) => number, xs: { main: number; engine: number }[]) => xs.reduce((acc, t) => acc + f(t), 0);
  return {
    servers: b.servers - a.servers,
    main: sum((t) => t.main, b.threads) - sum((t) => t.main, a.threads),
    engine: sum((t) => t.engine, b.threads) - sum((t) => t.engine, a.threads),
    database: grown(a.backends, b.backends),
    auxiliary: grown(a.auxiliary, b.auxiliary),
    client: b.client - a.client,
    proxy: b.proxy - a.proxy,
    machine: b.machine - a.machine,
  };
}

/** The loop's counts one replica's /metrics gives (LoopService.stats). */
async function loopFigures(server: ServerProcess): Promise<Record<'loads' | 'warm_starts' | 'warm_discarded' | 'recomputes' | 'history_reads', number>> {
  const text = await (await fetch(`${server.base}/metrics`)).text();
  const metric = (name: string) => Number(new RegExp(`^probnes_loop_${name} ([0-9.e+-]+)`, 'm').exec(text)?.[1] ?? NaN);
  return { loads: metric('loads'), warm_starts: metric('warm_starts'), warm_discarded: metric('warm_discarded'), recomputes: metric('recomputes'), history_reads: metric('history_reads') };
}

/** Engine compute seconds so far (the workers' own time per call, summed over methods and operations), from one server's /metrics. */
async function engineSeconds(server: ServerProcess): Promise<number> {
  const text = await (await fetch(`${server.base}/metrics`)).text();
  let sum = 0;
  for (const m of text.matchAll(/^probnes_engine_compute_seconds_sum\{[^}]*\} ([0-9.e+-]+)$/gm)) sum += Number(m[1]);
  return sum;
}

/** The servers of the run: one SQLite process, or N replicas on a fresh PostgreSQL database (dropped by `cleanup`). */
type PgPids = () => Promise<{ backends: number[]; auxiliary: number[] }>;
async function startServers(tmp: string): Promise<{ servers: ServerProcess[]; backends: PgPids; cleanup: () => Promise<void> }> {
  // No rate limit: 32 clients on one (open) tenant send far more than one key's per-minute quota.
  const env: Record<string, string> = { RATE_LIMIT_PER_MINUTE: '0', ...(cfg.engineWorkers ? { ENGINE_WORKERS: cfg.engineWorkers } : {}) };
  const nodeArgs = cfg.cpuProf ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(cfg.cpuProf)] : [];
  if (cfg.storage === 'sqlite') {
    const server = await startServer(path.join(tmp, 'load.db'), { env, stderr: 'inherit', nodeArgs });
    return { servers: [server], backends: async () => ({ backends: [], auxiliary: [] }), cleanup: async () => void (await server.stop('SIGTERM')) };
  }
  const name = `probnes_bench_${process.pid}`;
  const admin = new pg.Client({ connectionString: cfg.databaseUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(cfg.databaseUrl);
  url.pathname = `/${name}`;
  const start = () => startServer(path.join(tmp, 'unused.db'), { env: { ...env, DATABASE_URL: url.toString() }, stderr: 'inherit', readyTimeoutMs: 60_000, nodeArgs });
  const servers: ServerProcess[] = [];
  try {
    servers.push(await start()); // the first migrates
    servers.push(...(await Promise.all(Array.from({ length: cfg.replicas - 1 }, start))));
  } catch (err) {
    await Promise.all(servers.map((s) => s.stop('SIGKILL')));
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
    throw err;
  }
  return {
    servers,
    // The database server's processes that serve this run (one backend per pooled connection), and
    // those that serve no client (WAL writer, checkpointer, …; the postmaster is their parent).
    backends: async () => {
      const rows = (await admin.query<{ pid: number; datname: string | null; backend_type: string }>('SELECT pid, datname, backend_type FROM pg_stat_activity')).rows;
      const auxiliary = rows.filter((r) => r.backend_type !== 'client backend' && r.datname === null).map((r) => r.pid);
      try {
        const stat = fs.readFileSync(`/proc/${auxiliary[0]}/stat`, 'utf8');
        auxiliary.push(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      } catch {
        // not on this machine, or no auxiliary process listed
      }
      return { backends: rows.filter((r) => r.datname === name).map((r) => r.pid), auxiliary };
    },
    cleanup: async () => {
      await Promise.all(servers.map((s) => s.stop('SIGTERM')));
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

/** The machine's caddy with docker/Caddyfile.scale in front of the replicas (--caddy). */
async function startCaddy(servers: ServerProcess[]): Promise<{ base: string; child: ChildProcess }> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = spawn('caddy', ['run', '--adapter', 'caddyfile', '--config', path.resolve('docker/Caddyfile.scale')], {
    env: { ...process.env, PROBNES_LISTEN: `127.0.0.1:${port}`, PROBNES_UPSTREAMS: servers.map((x) => new URL(x.base).host).join(' ') },
    stdio: 'ignore',
  });
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`${base}/readyz`)).ok) return { base, child };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error('caddy did not start (is it installed? apt-get install caddy)');
}

async function main(): Promise<void> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-bench-load-'));
  const { servers, backends, cleanup } = await startServers(tmp);
  const server = servers[0]!;
  const proxy = cfg.caddy ? await startCaddy(servers) : null;
  const bases = proxy ? [proxy.base] : servers.map((x) => x.base);
  const stats: Stats = { latency: new Map(), errors: new Map(), observations: 0, suggested: 0 };
  let exitCode = 0;
  const printed: string[] = [];
  const say = (line: string) => {
    printed.push(line);
    console.log(line);
  };
  /** The run's figures for --out's runs.jsonl.gz. */
  const figures: Record<string, unknown> = { storage: cfg.storage, replicas: cfg.replicas, studies: cfg.studies, clients: cfg.clients, seconds: cfg.seconds, methods: cfg.methods, dim: cfg.dim, batch: cfg.batch, history: cfg.history, routing: cfg.routing };
  const started = new Date();
  try {
    const load0 = os.loadavg();
    say(`# bench:load — ${cfg.studies} studies × ${cfg.clients} clients × ${cfg.seconds} s; methods ${cfg.methods.join(', ')}; d=${cfg.dim}, batch_size ${cfg.batch}${cfg.history ? `, ${cfg.history} external observations per study first` : ''}${cfg.options ? `, options ${JSON.stringify(cfg.options)}` : ''}`);
    say(
      `# storage ${cfg.storage}${cfg.storage === 'postgres' ? `, ${cfg.replicas} replica${cfg.replicas > 1 ? 's' : ''}` : ''}, ENGINE_WORKERS ${cfg.engineWorkers ?? 'default'} per process` +
        (cfg.caddy ? ', every request through Caddy (docker/Caddyfile.scale)' : '') +
        (cfg.replicas > 1 && !cfg.caddy ? `, ${cfg.routing === 'study' ? "requests routed by study (each study's to one replica, by a hash of its id)" : 'requests sent to the replicas in turn'}` : ''),
    );
    const provenance = currentProvenance(`npm run bench:load -- ${process.argv.slice(2).join(' ')}`);
    say(`# ${provenance.command}; ${describeProvenance([provenance])}`);
    say(`# ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), node ${process.version}, load average at start ${load0.map((x) => x.toFixed(2)).join(' ')}\n`);
    const studies = await createStudies(server.base);
    const db0 = cfg.storage === 'postgres' ? await Promise.all(servers.map(dbFigures)) : null;
    const loop0 = await Promise.all(servers.map(loopFigures));
    const start = await memory(server);
    let peak = start;
    const sampler = setInterval(() => {
      void memory(server).then(
        (m) => (peak = { rssMiB: Math.max(peak.rssMiB, m.rssMiB), heapUsedMiB: Math.max(peak.heapUsedMiB, m.heapUsedMiB) }),
        () => {},
      );
    }, 1000);
    // Generations the set-up made (none unless --history moved a generation on), not counted.
    let generations0 = 0;
    for (const st of studies) generations0 += (await call(server.base, 'GET', `/v1/studies/${st.id}`)).generation as number;
    const engine0 = await Promise.all(servers.map(engineSeconds));
    const cpu0 = await cpuNow(servers, backends, proxy?.child.pid ?? null);
    const t0 = process.hrtime.bigint();
    const end = Date.now() + cfg.seconds * 1000;
    await Promise.all(Array.from({ length: cfg.clients }, (_, c) => client(bases, studies, c, end, stats)));
    const seconds = ms(t0) / 1000;
    const cpu1 = await cpuNow(servers, backends, proxy?.child.pid ?? null);
    const engine1 = await Promise.all(servers.map(engineSeconds));
    const db1 = db0 ? await Promise.all(servers.map(dbFigures)) : null;
    const loop1 = await Promise.all(servers.map(loopFigures));
    let generations = -generations0;
    for (const st of studies) generations += (await call(server.base, 'GET', `/v1/studies/${st.id}`)).generation as number;
    clearInterval(sampler);
    const last = await memory(server);
    peak = { rssMiB: Math.max(peak.rssMiB, last.rssMiB), heapUsedMiB: Math.max(peak.heapUsedMiB, last.heapUsedMiB) };
    const hwm = (await processMemory(server.pid))?.peakRssMiB;

    const requests = [...stats.latency.values()].reduce((s, l) => s + l.length, 0);
    const errors = [...stats.errors.values()].reduce((s, n) => s + n, 0);
    const rows = ['| route | requests | req/s | p50 (ms) | p90 (ms) | p99 (ms) | max (ms) |', '|---|---|---|---|---|---|---|'];
    for (const [route, l] of stats.latency) {
      rows.push(`| ${route} | ${l.length} | ${fmt(l.length / seconds)} | ${fmt(pct(l, 50))} | ${fmt(pct(l, 90))} | ${fmt(pct(l, 99))} | ${fmt(Math.max(...l))} |`);
    }
    say(rows.join('\n'));
    Object.assign(figures, { elapsedSeconds: seconds, requestsPerSecond: (requests + errors) / seconds, observationsPerSecond: stats.observations / seconds, generationsPerSecond: generations / seconds, errors, loadStart: load0 });
    figures.latencyMs = Object.fromEntries([...stats.latency].map(([route, l]) => [route, { n: l.length, p50: pct(l, 50), p90: pct(l, 90), p99: pct(l, 99), max: Math.max(...l) }]));
    say(`\n**${fmt((requests + errors) / seconds)} requests/s, ${fmt(stats.observations / seconds)} observations/s** (${stats.observations} observations, ${stats.suggested} trials suggested in ${fmt(seconds)} s)`);
    const engineBusy = engine1.reduce((a, x) => a + x, 0) - engine0.reduce((a, x) => a + x, 0);
    say(
      `**${fmt(generations / seconds)} generations/s** (${generations} engine updates over ${studies.length} studies); engine workers busy ${fmt(engineBusy / seconds)} s/s, ` +
        `${fmt((engineBusy * 1000) / Math.max(1, requests))} ms per request (their own time per call, waits for a core included)`,
    );
    if (db0 && db1) {
      type Db = Awaited<ReturnType<typeof dbFigures>>;
      const sum = (f: (d: Db) => number, xs: Db[]) => xs.reduce((acc, d) => acc + f(d), 0);
      const statements = sum((d) => d.statements, db1) - sum((d) => d.statements, db0);
      const commits = sum((d) => d.commits, db1) - sum((d) => d.commits, db0);
      const lock = sum((d) => d.lockSum, db1) - sum((d) => d.lockSum, db0);
      Object.assign(figures, { statementsPerRequest: statements / requests, commits, commitsPerSecond: commits / seconds, lockMsPerCommit: (lock / Math.max(1, commits)) * 1000 });
      say(
        `database: ${fmt(statements / requests)} statements (round trips) per request; ${commits} commits, ${fmt(commits / seconds)}/s, ` +
          `row lock held ${fmt((lock / Math.max(1, commits)) * 1000)} ms per commit on average (longest ${fmt(Math.max(...db1.map((d) => d.lockMax)) * 1000)} ms)`,
      );
    }
    const cpu = cpuSpent(cpu0, cpu1);
    const perRequest = (s: number) => `${fmt((s * 1000) / Math.max(1, requests))} ms`;
    const pg = cfg.storage === 'postgres';
    say(
      `CPU per request: server${servers.length > 1 ? 's' : ''} ${perRequest(cpu.servers)}` +
        (pg ? `, database backends ${perRequest(cpu.database)}` : '') +
        `, load generator ${perRequest(cpu.client)}${cfg.caddy ? `, Caddy ${perRequest(cpu.proxy)}` : ''}; machine-wide ${fmt((cpu.servers + cpu.database + cpu.client + cpu.proxy) / seconds)} cores busy with the run`,
    );
    // Where each generation's CPU went, the whole machine's included (/proc/stat): what a second replica has to share.
    const perGeneration = (s: number) => fmt((s * 1000) / Math.max(1, generations));
    const rest = cpu.machine - cpu.servers - cpu.database - cpu.auxiliary - cpu.client - cpu.proxy;
    say(
      `CPU per generation (ms): servers ${perGeneration(cpu.servers)} = main thread${servers.length > 1 ? 's' : ''} ${perGeneration(cpu.main)} + engine worker${servers.length > 1 ? 's' : ''} ${perGeneration(cpu.engine)} + other threads ${perGeneration(cpu.servers - cpu.main - cpu.engine)}` +
        (pg ? `; database backends ${perGeneration(cpu.database)}, PostgreSQL's other processes ${perGeneration(cpu.auxiliary)}` : '') +
        `; load generator ${perGeneration(cpu.client)}${cfg.caddy ? `; Caddy ${perGeneration(cpu.proxy)}` : ''}; the rest of the machine ${perGeneration(rest)}; machine ${perGeneration(cpu.machine)} (${fmt(cpu.machine / seconds)} cores busy); ${fmt(requests / Math.max(1, generations))} requests per generation`,
    );
    {
      const d = (k: keyof (typeof loop1)[number]) => loop1.reduce((a, x) => a + x[k], 0) - loop0.reduce((a, x) => a + x[k], 0);
      const per = (k: keyof (typeof loop1)[number]) => fmt(d(k) / Math.max(1, requests));
      say(`loop per request: ${per('loads')} snapshot loads, ${per('warm_starts')} warm starts, ${per('warm_discarded')} warm starts discarded, ${per('recomputes')} recomputes, ${per('history_reads')} history reads`);
    }
    say(`errors: ${errors}${errors ? ` — ${[...stats.errors].map(([k, n]) => `${k}: ${n}`).join('; ')}` : ''}`);
    const mem = (m: Memory) => `RSS ${fmt(m.rssMiB)} MiB, heap used ${fmt(m.heapUsedMiB)} MiB`;
    say(`server memory: start ${mem(start)}; peak ${mem(peak)} (sampled each second${hwm ? `; kernel high-water RSS ${fmt(hwm)} MiB` : ''}); end ${mem(last)}`);
    say(`load average at end ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
    if (errors > 0) exitCode = 1;
    if (cfg.out) {
      for (const f of writePublished(cfg.out, { title: 'bench:load', provenance, started, loadStart: load0, printed, records: [figures] })) console.log(`wrote ${f}`);
    }
  } finally {
    proxy?.child.kill('SIGTERM');
    await cleanup();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  process.exitCode = exitCode;
}

await main();
