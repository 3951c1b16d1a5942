#!/usr/bin/env bash
# The topology of docker/compose.scale.yml without Docker: N replicas of the server (default 3) on one
# PostgreSQL database, behind Debian's caddy (apt-get install caddy) with docker/Caddyfile.scale.
#
#   scripts/scale-local.sh                       # until Ctrl-C; replicas on 127.0.0.1:8081.., Caddy on :8080
#   DATABASE_URL=postgres://… REPLICAS=2 LISTEN=127.0.0.1:9090 scripts/scale-local.sh
#   scripts/scale-local.sh --smoke               # bring it up, check it (below), take it down
#
# The database in DATABASE_URL (default postgres://postgres@127.0.0.1:5432/probnes_scale) is created if
# missing; the replicas migrate it. Logs go to $LOG_DIR (default ./data/scale-logs). --smoke runs a
# study through Caddy, kills one replica with SIGKILL, checks that requests keep being answered,
# restarts it and checks that it is back in rotation, and checks the study affinity: all requests of
# one study go to one replica (the studies of the killed one move to the others meanwhile).
set -euo pipefail
cd "$(dirname "$0")/.."

REPLICAS="${REPLICAS:-3}"
LISTEN="${LISTEN:-127.0.0.1:8080}"
FIRST_PORT="${FIRST_PORT:-8081}"
DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/probnes_scale}"
LOG_DIR="${LOG_DIR:-./data/scale-logs}"
SMOKE=false
[ "${1:-}" = "--smoke" ] && SMOKE=true

command -v caddy >/dev/null || { echo "caddy is not installed (apt-get install -y caddy)" >&2; exit 1; }
mkdir -p "$LOG_DIR"

# Create the database if it does not exist (connecting to the server's maintenance database).
db_name="${DATABASE_URL##*/}"; db_name="${db_name%%\?*}"
admin_url="${DATABASE_URL%/*}/postgres"
node -e '
  const pg = require("pg");
  const [url, name] = process.argv.slice(1);
  const c = new pg.Client({ connectionString: url });
  c.connect()
    .then(() => c.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]))
    .then((r) => (r.rowCount ? null : c.query(`CREATE DATABASE "${name.replace(/"/g, "\"\"")}"`)))
    .then(() => c.end(), (e) => { console.error(`cannot reach PostgreSQL: ${e.message}`); process.exit(1); });
' "$admin_url" "$db_name"

pids=()
start_replica() { # index
  local port=$((FIRST_PORT + $1))
  PORT="$port" HOST=127.0.0.1 DATABASE_URL="$DATABASE_URL" ENGINE_WORKERS="${ENGINE_WORKERS:-1}" LOG_PRETTY=false \
    node --import tsx src/server.ts >>"$LOG_DIR/replica-$1.log" 2>&1 &
  pids[$1]=$!
}
wait_ready() { # url
  for _ in $(seq 1 300); do curl -fsS "$1/readyz" >/dev/null 2>&1 && return 0; sleep 0.2; done
  echo "not ready: $1" >&2; return 1
}
caddy_pid=""
cleanup() {
  [ -n "$caddy_pid" ] && kill "$caddy_pid" 2>/dev/null || true
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The first replica migrates; the others start once it is ready (they would wait on the advisory lock anyway).
start_replica 0
wait_ready "http://127.0.0.1:$FIRST_PORT"
for i in $(seq 1 $((REPLICAS - 1))); do start_replica "$i"; done
upstreams=""
for i in $(seq 0 $((REPLICAS - 1))); do
  wait_ready "http://127.0.0.1:$((FIRST_PORT + i))"
  upstreams="$upstreams 127.0.0.1:$((FIRST_PORT + i))"
done

PROBNES_LISTEN="$LISTEN" PROBNES_UPSTREAMS="${upstreams# }" caddy run --adapter caddyfile --config docker/Caddyfile.scale >>"$LOG_DIR/caddy.log" 2>&1 &
caddy_pid=$!
wait_ready "http://$LISTEN"
echo "ready: http://$LISTEN → ${REPLICAS} replicas (${upstreams# }), database ${DATABASE_URL%%\?*}"

if ! $SMOKE; then
  wait "$caddy_pid"
  exit $?
fi

base="http://$LISTEN"
# Rounds of the loop through Caddy on every study given: ask one point, report x² + y².
rounds() { # rounds-per-study id...
  node -e '
    const [base, n, ...ids] = process.argv.slice(1);
    const json = { "content-type": "application/json" };
    (async () => {
      for (let i = 0; i < Number(n); i++) {
        await Promise.all(ids.map(async (id) => {
          const s = await fetch(`${base}/v1/studies/${id}/suggestions?count=1&client_id=c${i % 3}`).then((r) => r.json());
          const t = s.trials[0];
          const body = JSON.stringify({ observations: [{ trial_id: t.trial_id, value: t.parameters.x ** 2 + t.parameters.y ** 2 }] });
          const o = await fetch(`${base}/v1/studies/${id}/observations`, { method: "POST", headers: json, body });
          if (!o.ok) throw new Error(`observation: ${o.status} ${await o.text()}`);
        }));
      }
    })().catch((e) => { console.error(e.message); process.exit(1); });
  ' "$base" "$@"
}
# The replicas whose log shows requests of a study (the log has each request's URL).
served_by() { # study-id
  for i in $(seq 0 $((REPLICAS - 1))); do if grep -q "/v1/studies/$1/" "$LOG_DIR/replica-$i.log"; then echo "$i"; fi; done
}
# 24 studies: enough that every replica gets some of them under the hash (all but certainly).
ids=()
for k in $(seq 1 24); do
  ids+=("$(curl -fsS -H 'content-type: application/json' -d "{\"name\":\"smoke-$k\",\"method\":\"cmaes\",\"batch_size\":4,\"seed\":$k,\"parameters\":[{\"name\":\"x\",\"bounds\":[-5,5]},{\"name\":\"y\",\"bounds\":[-5,5]}]}" "$base/v1/studies" | node -pe 'JSON.parse(require("fs").readFileSync(0)).id')")
done
rounds 4 "${ids[@]}"
# Study affinity (docker/Caddyfile.scale): each study's requests all went to one replica.
declare -A owner
for id in "${ids[@]}"; do
  who=$(served_by "$id" | tr '\n' ' ')
  [ "$(echo $who | wc -w)" = 1 ] || { echo "study $id was served by replicas [$who]; expected one" >&2; exit 1; }
  owner[$id]=${who% }
done
owners=$(printf '%s\n' "${owner[@]}" | sort -u | tr '\n' ' ')
echo "4 rounds on 24 studies through Caddy: ok; each study served by one replica (replicas used: $owners)"
[ "$(echo $owners | wc -w)" -ge 2 ] || { echo "all studies on one replica: the hash is not spreading them" >&2; exit 1; }
moved=()
for id in "${ids[@]}"; do [ "${owner[$id]}" = 1 ] && moved+=("$id"); done
kill -9 "${pids[1]}"
rounds 4 "${ids[@]}"
echo "4 more rounds with replica 1 killed: ok (its ${#moved[@]} studies served by the others)"
start_replica 1
wait_ready "http://127.0.0.1:$((FIRST_PORT + 1))"
sleep 11 # the passive fail_duration (10 s) of the failures while it was down, and some
served=$(grep -c '"request completed"' "$LOG_DIR/replica-1.log" || true)
rounds 4 "${ids[@]}"
served_after=$(grep -c '"request completed"' "$LOG_DIR/replica-1.log" || true)
for id in "${ids[@]}"; do
  curl -fsS "$base/v1/studies/$id" | node -e '
    const s = JSON.parse(require("fs").readFileSync(0));
    if (s.trial_counts.COMPLETED !== 12) { console.error(`study ${s.id}: ${JSON.stringify(s.trial_counts)}; expected 12 completed trials`); process.exit(1); }
  '
done
echo "every study: 12 completed trials, none lost or duplicated"
# Its own log counts the requests it served (health checks included): its studies came back to it.
if [ "${#moved[@]}" -gt 0 ]; then
  [ "$served_after" -gt "$((served + 4 * ${#moved[@]}))" ] || { echo "the restarted replica served $((served_after - served)) requests of the last rounds; expected its ${#moved[@]} studies' 8 each" >&2; exit 1; }
fi
echo "restarted replica back in rotation: served $((served_after - served)) requests of the last rounds (its ${#moved[@]} studies, health checks included)"
echo "smoke: ok"
