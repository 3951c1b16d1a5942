/**
 * bench:intermediate — what reading a big study's curves, and answering a report, cost the server.
 *
 * A SQLite database is written (through the storage's import) with one study of `--trials` COMPLETED
 * trials (10⁴ by default) that each reported `--steps` intermediate values (100: 10⁶ values), a
 * median stopping rule, and `--reports` more ACTIVE trials whose curves are as long. The real server
 * is started on it (a child process) and, while a poller asks /healthz every 10 ms, it is asked:
 *
 *   - GET intermediate_values with no query (the default page; before the route was paged this was
 *     the whole listing in one answer), with page_size=10000, and a page in the middle of the
 *     listing (its token found by walking the pages first);
 *   - the whole listing, page after page of 10 000 values (what a client reading everything pays);
 *   - POST …/intermediate: each ACTIVE trial reports step `steps` / 2, answered by the median rule
 *     over the completed trials' values at that step.
 *
 * Printed per read: latency (median, p95, max), bytes of the answer, values in it, and the /healthz
 * latency meanwhile (an answer that blocks the event loop shows there). `--root DIR` runs the server of
 * another checkout on the same database (e.g. a worktree of an earlier commit, for before/after): the
 * database is still written, and the requests timed, by this checkout's code; only the server is the other's.
 *
 *   npm run bench:intermediate -- [--trials 10000] [--steps 100] [--requests 10] [--reports 20] [--root DIR] [--out DIR]
 *
 * --out DIR: DIR/results.md (the printed table with the command, this script's commit, the served
 * checkout's commit, the machine and the load) and DIR/runs.jsonl.gz: one record per timed request (read,
 * ms, bytes and values of the answer, pages for a whole listing, 1-min load average then) and one per
 * /healthz poll beside it (the read it waited beside, ms), each naming the served root and its commit, so
 * every figure of the table recomputes. Figures of 2026-11-26:
 * bench-results/published/2026-11-26-intermediate (after the pages) and …-intermediate-before (297aaab).
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { SqliteStorage, type ImportedTrial, type IntermediateRecord } from '../src/storage/index.js';
import { freePort } from '../test/helpers/free-port.js';
import { waitReady } from '../test/helpers/server-process.js';
import { importBigStudy } from './lib/big-study.js';
import { fmt, lcg, ms, pct, pollHealth } from './lib/http-bench.js';
import { currentProvenance, writePublished } from './lib/provenance.js';

const { values: argv } = parseArgs({
  options: {
    trials: { type: 'string', default: '10000' },
    steps: { type: 'string', default: '100' },
    requests: { type: 'string', default: '10' },
    reports: { type: 'string', default: '20' },
    root: { type: 'string' },
    out: { type: 'string' },
  },
});
const TRIALS = Number(argv.trials);
const STEPS = Number(argv.steps);
const REQUESTS = Number(argv.requests);
const REPORTS = Number(argv.reports);
const ROOT = path.resolve(argv.root ?? path.join(import.meta.dirname, '..'));
const STUDY = 'bench-intermediate';

/**
 * The checkout whose server answers: with --root it is not this script's, so currentProvenance (which
 * reads the working directory's git) does not name it. Its commit and cleanliness go on every record.
 */
function servedProvenance(root: string): { root: string; commit: string | null; dirty: boolean | null } {
  const git = (args: string[]) => {
    try {
      return execFileSync('git', ['-C', root, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return null;
    }
  };
  const commit = git(['rev-parse', 'HEAD']);
  const status = commit === null ? null : git(['status', '--porcelain', '--untracked-files=no']);
  return { root, commit, dirty: status === null ? null : status !== '' };
}
const SERVED = servedProvenance(ROOT);

/** What --out writes: the printed lines, and one record per timed request and per /healthz poll. */
const printed: string[] = [];
const records: object[] = [];
const say = (line: string) => {
  printed.push(line);
  console.log(line);
};
const loads: number[] = [];
const load1 = () => {
  const l = os.loadavg()[0]!;
  loads.push(l);
  return l;
};

/** The study: TRIALS completed trials then REPORTS active ones, each with STEPS values; a generation per 10 trials. */
async function writeStudy(file: string): Promise<void> {
  const storage = SqliteStorage.open(file, { writerThread: false });
  const batch = 10;
  const t0 = Date.UTC(2025, 0, 1);
  const iso = (k: number) => new Date(t0 + k * 1000).toISOString();
  const rnd = lcg(TRIALS);
  const n = TRIALS + REPORTS;
  const trials: ImportedTrial[] = [];
  const values: IntermediateRecord[] = [];
  for (let i = 0; i < n; i++) {
    const done = i < TRIALS;
    const u = [rnd() * 2 - 1, rnd() * 2 - 1];
    const final = u[0]! ** 2 + u[1]! ** 2 + rnd();
    trials.push({
      trialId: i + 1, state: done ? 'COMPLETED' : 'ACTIVE', generation: Math.floor(i / batch), clientId: done ? null : `w${i}`,
      leaseExpiresAt: done ? null : '2100-01-01T00:00:00.000Z', parameters: { x0: u[0]! * 5, x1: u[1]! * 5 }, point: u,
      value: done ? final : null, stderr: null, failureReason: null, late: false, source: 'suggested', createdAt: iso(i), completedAt: done ? iso(i) : null, updatedAt: iso(i),
    });
    // The active trials report steps up to STEPS / 2 themselves, during the run.
    const steps = done ? STEPS : Math.floor(STEPS / 2);
    for (let s = 0; s < steps; s++) values.push({ trialId: i + 1, step: s, value: final + 10 * Math.exp(-s / 10), createdAt: iso(i) });
  }
  await importBigStudy(storage, {
    id: STUDY, name: 'curves', batch, trials, at: iso, updatedAt: iso(n), intermediate: values,
    loopSettings: { allow_repeats: false, stopping: { rule: 'median', min_steps: 0, warmup_trials: 5 } },
  });
  await storage.close();
}

async function startServer(file: string): Promise<{ base: string; stop: () => Promise<unknown> }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', LOG_PRETTY: 'false', ENGINE_WORKERS: '1', RATE_LIMIT_PER_MINUTE: '0', PORT: String(port), HOST: '127.0.0.1', DATABASE_PATH: file },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const base = `http://127.0.0.1:${port}`;
  await waitReady(base, exited, { pid: child.pid! });
  return { base, stop: () => (child.kill('SIGTERM'), exited) };
}

interface Figures {
  latency: number[];
  health: number[];
  bytes: number;
  values: number;
}

interface Answer {
  bytes: number;
  values: number;
  /** Pages read, for a whole listing. */
  pages?: number;
}

/** Runs `one` `count` times in a row while /healthz is polled every 10 ms; each request and poll is recorded under `read`. */
async function measure(base: string, read: string, count: number, one: (i: number) => Promise<Answer>): Promise<Figures> {
  const poller = pollHealth(base, (took) => records.push({ kind: 'healthz', read, ms: took, served: SERVED }));
  const latency: number[] = [];
  let last = { bytes: 0, values: 0 };
  for (let i = 0; i < count; i++) {
    const t = process.hrtime.bigint();
    const answer = await one(i);
    const took = ms(t);
    latency.push(took);
    records.push({ kind: 'request', read, i, ms: took, bytes: answer.bytes, values: answer.values, ...(answer.pages === undefined ? {} : { pages: answer.pages }), load1: load1(), served: SERVED });
    last = { bytes: answer.bytes, values: answer.values };
  }
  return { latency, health: await poller.stop(), ...last };
}

type Curves = { trials: { intermediate_values: unknown[] }[]; next_page_token?: string | null };

async function getCurves(base: string, query: string): Promise<{ bytes: number; values: number; body: Curves }> {
  const res = await fetch(`${base}/v1/studies/${STUDY}/intermediate_values${query}`);
  const text = await res.text();
  if (!res.ok) throw new Error(`intermediate_values${query}: ${res.status} ${text.slice(0, 200)}`);
  const body = JSON.parse(text) as Curves;
  return { bytes: Buffer.byteLength(text), values: body.trials.reduce((n, t) => n + t.intermediate_values.length, 0), body };
}

/** Every page of 10 000 values; the tokens on the way. */
async function walk(base: string): Promise<{ bytes: number; values: number; pages: number; tokens: string[] }> {
  let token: string | null = null;
  const tokens: string[] = [];
  let bytes = 0;
  let values = 0;
  let pages = 0;
  do {
    const page = await getCurves(base, `?page_size=10000${token ? `&page_token=${encodeURIComponent(token)}` : ''}`);
    bytes += page.bytes;
    values += page.values;
    pages++;
    token = page.body.next_page_token ?? null;
    if (token) tokens.push(token);
  } while (token);
  return { bytes, values, pages, tokens };
}

const row = (name: string, f: Figures) =>
  say(`| ${name} | ${fmt(pct(f.latency, 50))} | ${fmt(pct(f.latency, 95))} | ${fmt(Math.max(...f.latency))} | ${(f.bytes / 1024).toFixed(0)} | ${f.values} | ${fmt(pct(f.health, 50))} | ${fmt(pct(f.health, 99))} | ${fmt(Math.max(...f.health))} |`);

async function main() {
  const started = new Date();
  const loadStart = os.loadavg();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-intermediate-'));
  try {
    const file = path.join(tmp, 'curves.db');
    const w0 = Date.now();
    await writeStudy(file);
    console.error(`# ${TRIALS} trials × ${STEPS} steps written in ${((Date.now() - w0) / 1000).toFixed(1)} s`);
    const server = await startServer(file);
    try {
      say(`bench:intermediate — server of ${ROOT} (${SERVED.commit ?? 'no git checkout'}${SERVED.dirty ? ', with uncommitted changes' : SERVED.dirty === false ? ', clean tree' : ''}); ${TRIALS} completed trials × ${STEPS} steps (+${REPORTS} active); ms, KiB; /healthz polled every 10 ms.`);
      say(`Load average at start ${os.loadavg().map((x) => x.toFixed(1)).join(' ')} on ${os.availableParallelism()} cores.`);
      say('');
      say('| read | p50 | p95 | max | KiB | values | /healthz p50 | /healthz p99 | /healthz max |');
      say('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
      const timedRead = async (name: string, count: number, one: (i: number) => Promise<Answer>) => row(name, await measure(server.base, name, count, one));
      await timedRead('(idle: /healthz alone)', REQUESTS, async () => ({ bytes: Buffer.byteLength(await (await fetch(`${server.base}/healthz`)).text()), values: 0 }));
      // One unmeasured read first: the server's first answer of a route pays for compiling its code.
      await getCurves(server.base, '?page_size=1');
      await timedRead('GET intermediate_values (no query)', REQUESTS, () => getCurves(server.base, ''));
      const paged = (await getCurves(server.base, '?page_size=10000')).body.next_page_token !== undefined;
      if (paged) {
        await timedRead('GET ?page_size=10000', REQUESTS, () => getCurves(server.base, '?page_size=10000'));
        const { tokens } = await walk(server.base);
        const middle = tokens[Math.floor(tokens.length / 2)];
        if (middle) await timedRead(`GET ?page_size=10000, page ${Math.floor(tokens.length / 2) + 2} of ${tokens.length + 1}`, REQUESTS, () => getCurves(server.base, `?page_size=10000&page_token=${encodeURIComponent(middle)}`));
        await timedRead('all pages of 10000, one after another', Math.min(REQUESTS, 3), () => walk(server.base));
      }
      // Each active trial reports step STEPS/2 once (a new value: the insert and the rule's reads).
      const step = Math.floor(STEPS / 2);
      await timedRead(`POST …/intermediate at step ${step} (median of ${TRIALS} peers)`, REPORTS, async (i) => {
        const res = await fetch(`${server.base}/v1/studies/${STUDY}/trials/${TRIALS + 1 + i}/intermediate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ step, value: 1 + i / REPORTS }) });
        const text = await res.text();
        if (!res.ok) throw new Error(`report: ${res.status} ${text}`);
        return { bytes: Buffer.byteLength(text), values: 1 };
      });
      say('');
      say(`Load average at end ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}.`);
    } finally {
      await server.stop();
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  if (argv.out) {
    const command = `npx tsx bench/intermediate-reads.ts ${process.argv.slice(2).join(' ')}`.trim();
    const served = `served by ${SERVED.root}: ${SERVED.commit ?? 'no git checkout'}${SERVED.dirty ? ' (with uncommitted changes)' : SERVED.dirty === false ? ' (clean tree)' : ''}`;
    const loadDetail = `1-min load at each timed request ${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)}; ${served}`;
    for (const f of writePublished(argv.out, { title: 'bench:intermediate', provenance: currentProvenance(command), started, loadStart, printed, records, loadDetail })) console.log(`wrote ${f}`);
  }
}

await main();
