/**
 * The CPU a SQLite loop commit costs its writer thread, without HTTP, the engine or the event loop:
 * TrialsRepo.commitMany (what the writer thread runs, commit-worker.ts) on a database file, fed
 * the commits bench:load's studies make (method random, batch 4): per generation one commit with
 * the engine state and four new trials (the first leased), three that lease one trial each, and
 * four that complete one each with its evaluation row; commits of different studies grouped as the
 * group commit does. Prints CPU microseconds per commit (this thread's user + system time; the
 * fsync's wait is not CPU) and wall time, per round and the median.
 *
 * `--roots a,b,…` loads TrialsRepo from several checkouts (each a directory holding src/) and
 * alternates them round by round in this one process, each on a database of its own, so that the
 * machine's load falls on all alike: how a change to the commit path is compared with the code
 * before it. `--sync off` leaves out the fsync (synchronous=OFF) to show the CPU alone better.
 *
 * `--out DIR` also writes what it printed to DIR/results.md (with the commit, the command and the load
 * average) and one record per round and checkout, with that checkout's commit, to DIR/runs.jsonl.gz.
 *
 * Usage: npx tsx bench/sqlite-commit.ts [--roots .] [--studies 20] [--generations 300] [--group 8]
 *        [--rounds 5] [--sync full|off] [--out DIR]
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { currentProvenance, writePublished } from './lib/provenance.js';

const { values: v } = parseArgs({
  options: {
    roots: { type: 'string', default: '.' },
    studies: { type: 'string', default: '20' },
    generations: { type: 'string', default: '300' },
    group: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '5' },
    sync: { type: 'string', default: 'full' },
    out: { type: 'string' },
  },
});
const roots = v.roots.split(',').map((r) => path.resolve(r));
const STUDIES = Number(v.studies);
const GENERATIONS = Number(v.generations);
const GROUP = Number(v.group);
const ROUNDS = Number(v.rounds);
const BATCH = 4;

/** The modules are loaded from several checkouts at run time: their types are not this one's. */
type Any = any;

interface Variant {
  root: string;
  SqliteStorage: Any;
  openDatabase: Any;
  TrialsRepo: Any;
}

async function load(root: string): Promise<Variant> {
  const imp = (p: string) => import(pathToFileURL(path.join(root, p)).href);
  const [storage, connection, repo] = await Promise.all([imp('src/storage/sqlite/sqlite-storage.ts'), imp('src/storage/sqlite/connection.ts'), imp('src/storage/sqlite/trials-repo.ts')]);
  return { root, SqliteStorage: storage.SqliteStorage, openDatabase: connection.openDatabase, TrialsRepo: repo.TrialsRepo };
}

function study(id: string) {
  return {
    id,
    tenantId: 'default',
    name: `bench ${id}`,
    direction: 'minimize',
    parameters: [0, 1].map((i) => ({ name: `x${i}`, type: 'float', scale: 'linear', bounds: [-5, 5], prior: { mean: 0, std: 2.5 } })),
    prior: { mean: [0, 0], covariance: [[6.25, 0], [0, 6.25]], std: [2.5, 2.5] },
    method: 'random',
    batchSize: BATCH,
    options: {},
    seed: 1,
    maxTrials: null,
    leaseSeconds: 600,
    knownOptimum: null,
    metadata: null,
    state: 'ACTIVE',
    reason: null,
    createdAt: '2026-01-01T00:00:00.000Z',
  };
}

/** One study's commits in loop order, each against what the previous ones left (revision, commit count, next trial id). */
function* studyCommits(studyId: string): Generator<{ studyId: string; commit: Any }> {
  let revision = 1;
  let seq = 0;
  let nextId = 1;
  let idx = 0;
  let best = Infinity;
  let t = Date.parse('2026-01-01T00:00:00.000Z');
  const now = () => new Date((t += 7)).toISOString();
  for (let g = 1; g <= GENERATIONS; g++) {
    const first = nextId;
    const at = now();
    const lease = new Date(t + 600_000).toISOString();
    const newTrials = Array.from({ length: BATCH }, (_, i) => {
      const point = [Math.sin(g * 7 + i) * 5, Math.cos(g * 3 + i) * 5];
      return {
        state: i === 0 ? 'ACTIVE' : 'REQUESTED',
        generation: g,
        parameters: { x0: point[0], x1: point[1] },
        point,
        source: 'suggested',
        ...(i === 0 ? { clientId: 'client-1', leaseExpiresAt: lease } : {}),
      };
    });
    // The random method's state: its generator's words and the generation.
    const engineState = { version: 1, state: { generation: g, rng: [g * 2654435761 % 4294967296, 12345, 67890, 13579] } };
    yield { studyId, commit: { expectedRevision: revision, expectedCommitSeq: seq, generation: g, engineState, newTrials, now: at } };
    revision++;
    seq++;
    nextId += BATCH;
    for (let i = 1; i < BATCH; i++) {
      const u = { trialId: first + i, expectedState: 'REQUESTED', state: 'ACTIVE', clientId: 'client-1', leaseExpiresAt: lease, value: null, stderr: null, failureReason: null, late: false, completedAt: null };
      yield { studyId, commit: { expectedRevision: revision, expectedCommitSeq: seq, generation: g, engineState: null, newTrials: [], trialUpdates: [u], now: now() } };
      seq++;
    }
    for (let i = 0; i < BATCH; i++) {
      const completedAt = now();
      const value = Math.abs(Math.sin(g * 13 + i)) * 10;
      const improved = value < best;
      if (improved) best = value;
      const u = { trialId: first + i, expectedState: 'ACTIVE', state: 'COMPLETED', clientId: 'client-1', leaseExpiresAt: null, value, stderr: null, failureReason: null, late: false, completedAt };
      const evaluations = [{ index: ++idx, trialId: first + i, value, bestSoFar: best, improved, completedAt }];
      yield { studyId, commit: { expectedRevision: revision, expectedCommitSeq: seq, generation: g, engineState: null, newTrials: [], trialUpdates: [u], evaluations, now: completedAt } };
      seq++;
    }
  }
}

function cpuMicros(): number {
  const u = process.threadCpuUsage ? process.threadCpuUsage() : process.cpuUsage();
  return u.user + u.system;
}

/** One round on a fresh database: the studies' commits interleaved, in groups of GROUP commits of distinct studies. */
async function round(variant: Variant, dir: string): Promise<{ commits: number; cpuUs: number; wallMs: number }> {
  const file = path.join(dir, `r-${Math.random().toString(36).slice(2)}.db`);
  const ids = Array.from({ length: STUDIES }, (_, i) => `study-${i}`);
  const setup = variant.SqliteStorage.open(file, { writerThread: false });
  for (const id of ids) await setup.createStudy(study(id), { version: 1, state: { generation: 0 } });
  await setup.close();
  const db = variant.openDatabase(file);
  if (v.sync === 'off') db.pragma('synchronous = OFF');
  const repo = new variant.TrialsRepo(db);
  const streams = ids.map((id) => studyCommits(id));
  let commits = 0;
  const cpu0 = cpuMicros();
  const t0 = process.hrtime.bigint();
  for (let live = streams.length, k = 0; live > 0; ) {
    const group: { studyId: string; commit: Any }[] = [];
    live = 0;
    for (let n = 0; n < streams.length && group.length < GROUP; n++) {
      const next = streams[(k + n) % streams.length]!.next();
      if (!next.done) group.push(next.value);
    }
    k = (k + GROUP) % streams.length;
    if (group.length === 0) break;
    live = group.length;
    for (const s of repo.commitMany(group)) {
      if (!s.ok || !s.result.committed) throw new Error(`commit failed: ${JSON.stringify(s.ok ? s.result : String(s.error))}`);
    }
    commits += group.length;
  }
  const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const cpuUs = cpuMicros() - cpu0;
  db.close();
  for (const f of fs.readdirSync(dir)) if (f.startsWith(path.basename(file))) fs.rmSync(path.join(dir, f));
  return { commits, cpuUs, wallMs };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** The commit a checkout is at (null: not a git checkout). */
function commitOf(root: string): string | null {
  try {
    return execFileSync('git', ['-C', root, 'rev-parse', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

const started = new Date();
const loadStart = os.loadavg();
const printed: string[] = [];
const say = (line: string) => {
  console.log(line);
  printed.push(line);
};
const records: object[] = [];
const variants = await Promise.all(roots.map(load));
const commits = new Map(roots.map((r) => [r, commitOf(r)]));
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sqlite-commit-'));
say(`# bench sqlite-commit — ${STUDIES} studies × ${GENERATIONS} generations (${GENERATIONS * 2 * BATCH} commits each), groups of ${GROUP}, synchronous ${v.sync}, ${ROUNDS} rounds`);
say(`# ${os.cpus().length} cores, node ${process.version}, load average at start ${loadStart.map((x) => x.toFixed(2)).join(' ')}`);
for (const root of roots) say(`# ${root}: commit ${commits.get(root) ?? 'unknown'}`);
const per = new Map<string, number[]>(roots.map((r) => [r, []]));
for (let r = 1; r <= ROUNDS; r++) {
  for (const variant of variants) {
    const res = await round(variant, dir);
    const us = res.cpuUs / res.commits;
    per.get(variant.root)!.push(us);
    records.push({ round: r, root: variant.root, commit: commits.get(variant.root), studies: STUDIES, generations: GENERATIONS, group: GROUP, sync: v.sync, ...res, cpuUsPerCommit: us, load: os.loadavg() });
    say(`round ${r} ${variant.root}: ${res.commits} commits, CPU ${us.toFixed(1)} µs/commit, wall ${((res.wallMs * 1000) / res.commits).toFixed(1)} µs/commit`);
  }
}
say('');
for (const [root, xs] of per) say(`${root}: CPU µs/commit median ${median(xs).toFixed(1)} (rounds ${xs.map((x) => x.toFixed(1)).join(' / ')})`);
if (roots.length > 1) {
  const base = median(per.get(roots[0]!)!);
  for (const root of roots.slice(1)) say(`${root} / ${roots[0]}: ${(median(per.get(root)!) / base).toFixed(3)}`);
}
say(`# load average at end ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
fs.rmSync(dir, { recursive: true, force: true });
if (v.out) {
  const provenance = currentProvenance(`npx tsx bench/sqlite-commit.ts ${process.argv.slice(2).join(' ')}`);
  for (const f of writePublished(v.out, { title: 'bench sqlite-commit', provenance, started, loadStart, printed, records })) console.log(`wrote ${f}`);
}
