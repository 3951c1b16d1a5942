#!/usr/bin/env bash
# The four figures of the scaling targets (issue 14, item 8), from four bench:load runs back to back:
#   1. storage-bound, SQLite against one PostgreSQL replica: observations/s (target: PostgreSQL ≥ 50 %)
#   2. the same runs: GET suggestions p99 (target: PostgreSQL ≤ 2× SQLite)
#   3. engine-bound (50 prob-cmaes studies, ENGINE_WORKERS=1 per replica), one replica against two:
#      generations/s (target: two ≥ 1.6× one)
#   4. errors in all four runs (target: 0)
# Run with the machine otherwise idle; about 4 minutes at DIM=10 (the default), 5 at DIM=30.
#
#   scripts/bench-scale-targets.sh                   # outputs in ./data/bench-scale-targets/
#   DIM=30 SECONDS_ENGINE=40 OUT=/tmp/x scripts/bench-scale-targets.sh
#
# DIM and HISTORY set the engine-bound studies (d, external observations each before the timed phase);
# the more the engine costs per generation against the requests around it, the more a second
# replica (a second engine worker) can add on two cores. DATABASE_URL: the PostgreSQL server to use.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT="${OUT:-./data/bench-scale-targets}"
DIM="${DIM:-10}"
HISTORY="${HISTORY:-300}"
SECONDS_STORAGE="${SECONDS_STORAGE:-20}"
SECONDS_ENGINE="${SECONDS_ENGINE:-25}"
DB=()
[ -n "${DATABASE_URL:-}" ] && DB=(--database-url "$DATABASE_URL")
mkdir -p "$OUT"

storage=(--methods random --studies 20 --clients 16 --seconds "$SECONDS_STORAGE" --engine-workers 1)
engine=(--methods prob-cmaes --studies 50 --clients 32 --seconds "$SECONDS_ENGINE" --engine-workers 1 --dim "$DIM" --history "$HISTORY")

run() { # name args...
  local name=$1
  shift
  echo "== $name: npm run bench:load -- $*" >&2
  npm run --silent bench:load -- "$@" >"$OUT/$name.md" 2>"$OUT/$name.stderr" || { echo "$name failed (exit $?): see $OUT/$name.md" >&2; }
}
run sqlite-storage --storage sqlite "${storage[@]}"
run postgres-storage --storage postgres --replicas 1 "${storage[@]}" "${DB[@]}"
run postgres-engine-1 --storage postgres --replicas 1 "${engine[@]}" "${DB[@]}"
run postgres-engine-2 --storage postgres --replicas 2 "${engine[@]}" "${DB[@]}"

node - "$OUT" <<'EOF'
const fs = require('node:fs');
const dir = process.argv[2];
const read = (n) => fs.readFileSync(`${dir}/${n}.md`, 'utf8');
const num = (text, re) => { const m = re.exec(text); return m ? Number(m[1]) : NaN; };
const obs = (t) => num(t, /([0-9.]+) observations\/s\*\*/);
const gens = (t) => num(t, /\*\*([0-9.]+) generations\/s\*\*/);
const p99 = (t) => num(t, /^\| GET suggestions \| \d+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| ([0-9.]+) \|/m);
const errors = (t) => num(t, /^errors: (\d+)/m);
const load = (t) => `${/load average at start ([0-9. ]+)/.exec(t)?.[1]?.trim()} → ${/load average at end ([0-9. ]+)/.exec(t)?.[1]?.trim()}`;
const [sq, pg, e1, e2] = ['sqlite-storage', 'postgres-storage', 'postgres-engine-1', 'postgres-engine-2'].map(read);
const ok = (b) => (b ? 'met' : 'NOT met');
const r1 = obs(pg) / obs(sq), r2 = p99(pg) / p99(sq), r3 = gens(e2) / gens(e1);
const errs = [sq, pg, e1, e2].map(errors);
console.log(`| target | figure | |\n|---|---|---|`);
console.log(`| PostgreSQL ≥ 50 % of SQLite's observations/s (storage-bound) | ${obs(pg)} / ${obs(sq)} = ${(100 * r1).toFixed(0)} % | ${ok(r1 >= 0.5)} |`);
console.log(`| GET suggestions p99 ≤ 2× SQLite's | ${p99(pg)} / ${p99(sq)} ms = ${r2.toFixed(2)}× | ${ok(r2 <= 2)} |`);
console.log(`| two replicas ≥ 1.6× one, generations/s (engine-bound) | ${gens(e2)} / ${gens(e1)} = ${r3.toFixed(2)}× | ${ok(r3 >= 1.6)} |`);
console.log(`| 0 errors | ${errs.join(', ')} | ${ok(errs.every((e) => e === 0))} |`);
console.log(`\nload average (1, 5, 15 min) at start → end of each run: ${[sq, pg, e1, e2].map(load).join('; ')}`);
console.log(`outputs: ${dir}/{sqlite-storage,postgres-storage,postgres-engine-1,postgres-engine-2}.md`);
EOF
