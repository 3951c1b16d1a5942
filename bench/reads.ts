/**
 * bench:reads — what the read routes cost as a study grows, and what they do to everyone else.
 *
 * For each size (100, 10⁴, 10⁵ completed trials by default) a SQLite database is written with one
 * CMA-ES study (d = 2, batch 10: one engine-state snapshot per 10 trials) through the storage's
 * import, the real server is started on it (a child process, ENGINE_WORKERS=1), and each read is
 * requested `--requests` times in a row while a poller asks /healthz every 10 ms. Printed per size
 * and read: the read's latency (median, p95, max) and the /healthz latency during it (median,
 * p99, max): a read that blocks the server's event loop shows there, whoever asked. The figures
 * that matter are the ratios between sizes within one run (the machine is shared).
 *
 *   npm run bench:reads -- [--sizes 100,10000,100000] [--requests 50] [--out bench-results/published/<date>-reads]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { parseArgs } from 'node:util';
import { SqliteStorage, type ImportedTrial } from '../src/storage/index.js';
import { startServer } from '../test/helpers/server-process.js';
import { importBigStudy } from './lib/big-study.js';
import { fmt, lcg, ms, pct, pollHealth } from './lib/http-bench.js';

const { values: argv } = parseArgs({
  options: { sizes: { type: 'string', default: '100,10000,100000' }, requests: { type: 'string', default: '50' }, out: { type: 'string' } },
});
/** What is printed, kept for --out's results.md; the raw latencies for its runs.jsonl.gz. */
const printed: string[] = [];
const runs: object[] = [];
const log = (line: string) => {
  console.log(line);
  printed.push(line);
};
const SIZES = argv.sizes!.split(',').map(Number);
const REQUESTS = Number(argv.requests);
const BATCH = 10;
const STUDY = 'bench-reads';

/** One study with `n` completed trials in completion order, and a snapshot per generation of BATCH. */
async function writeStudy(file: string, n: number): Promise<void> {
  const storage = SqliteStorage.open(file, { writerThread: false });
  const t0 = Date.UTC(2025, 0, 1);
  const iso = (k: number) => new Date(t0 + k * 1000).toISOString();
  const rnd = lcg(n);
  const trials: ImportedTrial[] = Array.from({ length: n }, (_, i) => {
    const u = [rnd() * 2 - 1, rnd() * 2 - 1];
    return {
      trialId: i + 1, state: 'COMPLETED', generation: Math.floor(i / BATCH), clientId: null, leaseExpiresAt: null,
      parameters: { x0: u[0]! * 5, x1: u[1]! * 5 }, point: u, value: u[0]! ** 2 + u[1]! ** 2 + rnd(), stderr: null,
      failureReason: null, late: false, source: 'suggested', createdAt: iso(i), completedAt: iso(i), updatedAt: iso(i),
    };
  });
  await importBigStudy(storage, { id: STUDY, name: 'reads', batch: BATCH, trials, at: iso, updatedAt: iso(n), knownOptimum: 0 });
  await storage.close();
}

interface Figures {
  read: number[];
  health: number[];
}

/** `REQUESTS` sequential GETs of `url` while /healthz is polled every 10 ms. */
async function measure(base: string, url: string): Promise<Figures> {
  const poller = pollHealth(base);
  const read: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const t = process.hrtime.bigint();
    const res = await fetch(base + url);
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`${url}: ${res.status}`);
    read.push(ms(t));
  }
  return { read, health: await poller.stop() };
}

const READS: [string, string][] = [
  ['best', `/v1/studies/${STUDY}/best`],
  ['history (first page)', `/v1/studies/${STUDY}/history`],
  ['history stride 100', `/v1/studies/${STUDY}/history?stride=100`],
  ['trials (first page)', `/v1/studies/${STUDY}/trials`],
  ['trials ?state=ACTIVE', `/v1/studies/${STUDY}/trials?state=ACTIVE`],
  ['study', `/v1/studies/${STUDY}`],
  ['metrics', '/metrics'],
];

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-reads-'));
  log(`# bench:reads — ${REQUESTS} sequential requests per read; /healthz polled every 10 ms meanwhile; ms`);
  log(`# load average at start ${os.loadavg().map((x) => x.toFixed(1)).join(' ')} on ${os.availableParallelism()} cores`);
  log('| trials | read | read p50 | read p95 | read max | /healthz p50 | /healthz p99 | /healthz max |');
  log('|---:|---|---:|---:|---:|---:|---:|---:|');
  try {
    for (const n of SIZES) {
      const file = path.join(tmp, `reads-${n}.db`);
      const w0 = Date.now();
      await writeStudy(file, n);
      console.error(`# ${n} trials written in ${((Date.now() - w0) / 1000).toFixed(1)} s`);
      const server = await startServer(file, { env: { ENGINE_WORKERS: '1', RATE_LIMIT_PER_MINUTE: '0' }, stderr: 'inherit' });
      try {
        const idle = await measure(server.base, '/healthz');
        runs.push({ trials: n, read: 'idle', readMs: idle.read, healthzMs: idle.health });
        log(`| ${n} | (idle: /healthz alone) | ${fmt(pct(idle.read, 50))} | ${fmt(pct(idle.read, 95))} | ${fmt(Math.max(...idle.read))} | ${fmt(pct(idle.health, 50))} | ${fmt(pct(idle.health, 99))} | ${fmt(Math.max(...idle.health))} |`);
        for (const [name, url] of READS) {
          const f = await measure(server.base, url);
          runs.push({ trials: n, read: name, url, readMs: f.read, healthzMs: f.health });
          log(`| ${n} | ${name} | ${fmt(pct(f.read, 50))} | ${fmt(pct(f.read, 95))} | ${fmt(Math.max(...f.read))} | ${fmt(pct(f.health, 50))} | ${fmt(pct(f.health, 99))} | ${fmt(Math.max(...f.health))} |`);
        }
      } finally {
        await server.stop();
      }
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  log(`# load average at end ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}`);
  if (argv.out) {
    fs.mkdirSync(argv.out, { recursive: true });
    fs.writeFileSync(path.join(argv.out, 'results.md'), printed.join('\n') + '\n');
    fs.writeFileSync(path.join(argv.out, 'runs.jsonl.gz'), zlib.gzipSync(runs.map((r) => JSON.stringify(r)).join('\n') + '\n'));
  }
}

await main();
