/**
 * Which PostgreSQL client: node-postgres (`pg`) or `postgres`, measured on the shapes of work the
 * storage does. Sequential round trips (one request's latency), 32 concurrent single-row reads
 * over a pool of 8 (a replica under load), and a commit-shaped transaction (BEGIN, SELECT ... FOR
 * UPDATE, INSERT of 4 rows with JSON text, UPDATE, COMMIT) run 16 at a time on 16 rows.
 *
 *   npm run bench:pg-clients -- [--url postgres://postgres@127.0.0.1:5432/postgres] [--seconds 3]
 */
import pg from 'pg';
import postgres from 'postgres';

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : def;
}
const url = arg('url', process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
const seconds = Number(arg('seconds', '3'));
const POOL = 8;

interface Client {
  name: string;
  one(): Promise<void>;
  read(id: number): Promise<void>;
  tx(id: number): Promise<void>;
  end(): Promise<void>;
}

const row = JSON.stringify({ x: 0.5, y: [1, 2, 3] });

function pgClient(): Client {
  const pool = new pg.Pool({ connectionString: url, max: POOL });
  return {
    name: 'pg (node-postgres) 8',
    one: async () => void (await pool.query('SELECT 1')),
    read: async (id) => void (await pool.query({ name: 'read', text: 'SELECT id, n, body FROM bench_clients WHERE id = $1', values: [id] })),
    tx: async (id) => {
      const c = await pool.connect();
      try {
        await c.query('BEGIN');
        const r = await c.query({ name: 'lock', text: 'SELECT n FROM bench_clients WHERE id = $1 FOR UPDATE', values: [id] });
        const n = (r.rows[0] as { n: number }).n;
        await c.query({ name: 'ins', text: 'INSERT INTO bench_clients_t (id, k, body) SELECT $1, k, $3 FROM generate_series($2::int, $2::int + 3) k', values: [id, n, row] });
        await c.query({ name: 'upd', text: 'UPDATE bench_clients SET n = n + 4 WHERE id = $1', values: [id] });
        await c.query('COMMIT');
      } catch (e) {
        await c.query('ROLLBACK');
        throw e;
      } finally {
        c.release();
      }
    },
    end: () => pool.end(),
  };
}

function postgresClient(): Client {
  const sql = postgres(url, { max: POOL, onnotice: () => {} });
  return {
    name: 'postgres (porsager) 3',
    one: async () => void (await sql`SELECT 1`),
    read: async (id) => void (await sql`SELECT id, n, body FROM bench_clients WHERE id = ${id}`),
    tx: async (id) =>
      void (await sql.begin(async (t) => {
        const [r] = await t`SELECT n FROM bench_clients WHERE id = ${id} FOR UPDATE`;
        const n = (r as { n: number }).n;
        await t`INSERT INTO bench_clients_t (id, k, body) SELECT ${id}, k, ${row} FROM generate_series(${n}::int, ${n}::int + 3) k`;
        await t`UPDATE bench_clients SET n = n + 4 WHERE id = ${id}`;
      })),
    end: () => sql.end(),
  };
}

/** Operations per second with `width` callers in a closed loop for `seconds`. */
async function rate(width: number, op: (i: number) => Promise<void>): Promise<number> {
  const end = performance.now() + seconds * 1000;
  let n = 0;
  await Promise.all(
    Array.from({ length: width }, async (_, w) => {
      while (performance.now() < end) {
        await op(w);
        n++;
      }
    }),
  );
  return n / seconds;
}

async function main(): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query('DROP TABLE IF EXISTS bench_clients_t; DROP TABLE IF EXISTS bench_clients');
  await admin.query('CREATE TABLE bench_clients (id int PRIMARY KEY, n int NOT NULL, body text NOT NULL)');
  await admin.query('CREATE TABLE bench_clients_t (id int, k int, body text, PRIMARY KEY (id, k))');
  await admin.query(`INSERT INTO bench_clients SELECT g, 0, $1 FROM generate_series(0, 31) g`, [row]);
  const rows: string[] = [];
  for (const make of [pgClient, postgresClient, pgClient, postgresClient]) {
    const c = make();
    await c.one(); // connect outside the timing
    const seq = await rate(1, () => c.one());
    const reads = await rate(32, (w) => c.read(w));
    const txs = await rate(16, (w) => c.tx(w));
    rows.push(`| ${c.name} | ${(1000 / seq).toFixed(3)} | ${reads.toFixed(0)} | ${txs.toFixed(0)} |`);
    await c.end();
  }
  await admin.query('DROP TABLE bench_clients_t; DROP TABLE bench_clients');
  await admin.end();
  console.log(`pool ${POOL}, ${seconds} s per figure, each client measured twice (alternating)`);
  console.log('| client | sequential SELECT 1, ms | 32 concurrent reads/s | 16 concurrent commit-shaped tx/s |');
  console.log('|---|---|---|---|');
  for (const r of rows) console.log(r);
}

await main();
