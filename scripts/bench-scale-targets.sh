#!/usr/bin/env bash
# The four figures of the scaling targets (docs/capacity.md), from four bench:load runs back to back:
#   1. storage-bound, SQLite against one PostgreSQL replica: observations/s (target: PostgreSQL ≥ 50 %)
#   2. the same runs: GET suggestions p99 (target: PostgreSQL ≤ 2× SQLite)
#   3. engine-bound (50 prob-cmaes studies, ENGINE_WORKERS=1 per replica), one replica against two:
#      generations/s (target: two ≥ 1.6× one)
#   4. errors in all four runs (target: 0)
# The engine-bound pair runs once per dimension in DIMS (default "10 30"): at d = 10 the requests
# around an engine update cost more CPU than the update itself, so on two cores a second replica has
# little to add; at d = 30 the update dominates (docs/BENCHMARKS.md, "Storage"). After the table, per
# dimension, what a generation cost the whole machine with one and with two replicas (bench:load's "CPU
# per generation": engine workers, main threads, database, load generator, the rest) and the ceiling
# that puts on two replicas: cores × 1000 / (ms per generation with two) generations/s. Run with the
# machine otherwise idle; about 4.5 minutes with the defaults (4 min 18 s at f006c29 on the shared machine).
#
#   scripts/bench-scale-targets.sh                   # outputs in ./data/bench-scale-targets/
#   DIMS=30 SECONDS_ENGINE=40 OUT=/tmp/x scripts/bench-scale-targets.sh
#
# HISTORY: external observations per engine-bound study before the timed phase (default 300).
# DATABASE_URL: the PostgreSQL server to use (default postgres://postgres@127.0.0.1:5432/postgres).
set -euo pipefail
cd "$(dirname "$0")/.."

OUT="${OUT:-./data/bench-scale-targets}"
DIMS="${DIMS:-10 30}"
HISTORY="${HISTORY:-300}"
SECONDS_STORAGE="${SECONDS_STORAGE:-20}"
SECONDS_ENGINE="${SECONDS_ENGINE:-30}"
DB=()
[ -n "${DATABASE_URL:-}" ] && DB=(--database-url "$DATABASE_URL")
mkdir -p "$OUT"

storage=(--methods random --studies 20 --clients 16 --seconds "$SECONDS_STORAGE" --engine-workers 1)
engine=(--methods prob-cmaes --studies 50 --clients 32 --seconds "$SECONDS_ENGINE" --engine-workers 1 --history "$HISTORY")

run() { # name args...
  local name=$1
  shift
  echo "== $name: npm run bench:load -- $*" >&2
  npm run --silent bench:load -- "$@" >"$OUT/$name.md" 2>"$OUT/$name.stderr" || { echo "$name failed (exit $?): see $OUT/$name.md" >&2; }
}
run sqlite-storage --storage sqlite "${storage[@]}"
run postgres-storage --storage postgres --replicas 1 "${storage[@]}" "${DB[@]}"
for d in $DIMS; do
  run "postgres-engine-d$d-1" --storage postgres --replicas 1 "${engine[@]}" --dim "$d" "${DB[@]}"
  run "postgres-engine-d$d-2" --storage postgres --replicas 2 "${engine[@]}" --dim "$d" "${DB[@]}"
done

node - "$OUT" $DIMS <<'EOF'
const fs = require('node:fs');
const [dir, ...dims] = process.argv.slice(2);
const read = (n) => fs.readFileSync(`${dir}/${n}.md`, 'utf8');
const num = (text, re) => { const m = re.exec(text); return m ? Number(m[1]) : NaN; };
const obs = (t) => num(t, /([0-9.]+) observations\/s\*\*/);
const gens = (t) => num(t, /\*\*([0-9.]+) generations\/s\*\*/);
const p99 = (t) => num(t, /^\| GET suggestions \| \d+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| ([0-9.]+) \|/m);
const errors = (t) => num(t, /^errors: (\d+)/m);
const load = (t) => `${/load average at start ([0-9. ]+)/.exec(t)?.[1]?.trim()} → ${/load average at end ([0-9. ]+)/.exec(t)?.[1]?.trim()}`;
const [sq, pg] = ['sqlite-storage', 'postgres-storage'].map(read);
const engine = dims.map((d) => ({ d, one: read(`postgres-engine-d${d}-1`), two: read(`postgres-engine-d${d}-2`) }));
const ok = (b) => (b ? 'met' : 'NOT met');
const r1 = obs(pg) / obs(sq), r2 = p99(pg) / p99(sq);
const all = [sq, pg, ...engine.flatMap((e) => [e.one, e.two])];
const errs = all.map(errors);
console.log(`| target | figure | |\n|---|---|---|`);
console.log(`| PostgreSQL ≥ 50 % of SQLite's observations/s (storage-bound) | ${obs(pg)} / ${obs(sq)} = ${(100 * r1).toFixed(0)} % | ${ok(r1 >= 0.5)} |`);
console.log(`| GET suggestions p99 ≤ 2× SQLite's | ${p99(pg)} / ${p99(sq)} ms = ${r2.toFixed(2)}× | ${ok(r2 <= 2)} |`);
for (const e of engine) {
  const r = gens(e.two) / gens(e.one);
  console.log(`| two replicas ≥ 1.6× one, generations/s (engine-bound, d = ${e.d}) | ${gens(e.two)} / ${gens(e.one)} = ${r.toFixed(2)}× | ${ok(r >= 1.6)} |`);
}
console.log(`| 0 errors | ${errs.join(', ')} | ${ok(errs.every((e) => e === 0))} |`);
// The ceiling of two replicas on this machine's cores from what each generation cost the whole machine
// (bench:load's "CPU per generation" line): cores × 1000 / machine ms per generation, against one replica's rate.
const cores = require('node:os').cpus().length;
const perGen = (t, what) => num(/^CPU per generation.*$/m.exec(t)?.[0] ?? '', new RegExp(`${what} ([0-9.]+)`));
for (const e of engine) {
  const part = (t) => `engine ${perGen(t, 'engine workers?')}, main ${perGen(t, 'main threads?')}, other threads ${perGen(t, 'other threads')}, database ${perGen(t, 'database backends')}, PostgreSQL's other processes ${perGen(t, "PostgreSQL's other processes")}, load generator ${perGen(t, 'load generator')}, rest ${perGen(t, 'the rest of the machine')}`;
  const m1 = perGen(e.one, '; machine'), m2 = perGen(e.two, '; machine');
  const ceiling = (cores * 1000) / m2;
  console.log(`\nd = ${e.d}, CPU per generation (ms): one replica ${m1} (${part(e.one)}); two ${m2} (${part(e.two)}). ` +
    `Two replicas' ceiling on ${cores} cores: ${cores} × 1000 / ${m2} = ${ceiling.toFixed(1)} generations/s = ${(ceiling / gens(e.one)).toFixed(2)}× one replica's ${gens(e.one)}`);
}
console.log(`\nload average (1, 5, 15 min) at start → end of each run: ${all.map(load).join('; ')}`);
console.log(`outputs: ${dir}/*.md`);
EOF
