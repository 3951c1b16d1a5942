/**
 * ARCHITECTURE.md rule 13: which value is better is decided in src/domain/results alone. Everything
 * else (the server's other modules, the dashboard, both clients, the SQL of migrations from 008 on)
 * holds no test of a study's direction: a comparison of `direction` with a direction's name, or a
 * SQL CASE on it. Declaring the two names (schemas, enums, the Optuna bridge's mapping of its own
 * direction to the study's) is not a test and is allowed.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

function files(dir: string, ext: RegExp): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return name === 'node_modules' || name === '_build' ? [] : files(p, ext);
    return ext.test(name) ? [p] : [];
  });
}

/** A direction tested in code: `direction === 'maximize'`, `'minimize' == x.direction`, a ternary on a name. */
const CODE = [/direction['"]?\]?\)?\s*[!=]==?\s*['"](?:maximize|minimize)['"]/, /['"](?:maximize|minimize)['"]\s*[!=]==?\s*[\w.]*direction/];
/** A direction tested in SQL. */
const SQL = /CASE\s+[\w.]*direction\b|[\w.]*direction\s*(?:=|<>|!=)\s*'(?:maximize|minimize)'/i;

function offences(paths: string[], patterns: RegExp[]): string[] {
  return paths.flatMap((p) =>
    readFileSync(p, 'utf8')
      .split('\n')
      .flatMap((line, i) => (patterns.some((re) => re.test(line)) ? [`${relative(ROOT, p)}:${i + 1}: ${line.trim()}`] : [])),
  );
}

describe('rule 13: one meaning of a result', () => {
  it('no module outside src/domain/results tests a study\'s direction (server, dashboard, clients)', () => {
    const server = files(join(ROOT, 'src'), /\.(ts|js)$/).filter((p) => !relative(ROOT, p).startsWith('src/domain/results/'));
    const clients = [...files(join(ROOT, 'clients', 'typescript', 'src'), /\.ts$/), ...files(join(ROOT, 'clients', 'python', 'probnes_client'), /\.py$/)];
    expect(server.length).toBeGreaterThan(100);
    expect(clients.length).toBeGreaterThan(1);
    expect(offences([...server, ...clients], CODE)).toEqual([]);
  });

  it('no migration from 008 on decides by the direction (006 and PostgreSQL 005 did, before it)', () => {
    const sql = [...files(join(ROOT, 'migrations'), /\.sql$/)].filter((p) => Number(/(\d{3})_[^/]*\.sql$/.exec(p)?.[1]) >= 8);
    expect(sql.length).toBeGreaterThanOrEqual(2);
    expect(offences(sql, [SQL])).toEqual([]);
  });

  it('the patterns find what they are for', () => {
    expect(CODE.some((re) => re.test("const sign = study.direction === 'maximize' ? -1 : 1;"))).toBe(true);
    expect(CODE.some((re) => re.test('self.sign = -1.0 if study.get("direction") == "maximize" else 1.0'))).toBe(true);
    expect(CODE.some((re) => re.test("const flip = study['direction'] !== 'minimize';"))).toBe(true);
    expect(CODE.some((re) => re.test("if (\"maximize\" === s.direction) x = -x;"))).toBe(true);
    expect(CODE.some((re) => re.test('"direction": "maximize" if study.direction == StudyDirection.MAXIMIZE else "minimize",'))).toBe(false);
    expect(SQL.test("SELECT CASE s.direction WHEN 'maximize' THEN -1.0 ELSE 1.0 END")).toBe(true);
    expect(SQL.test("direction TEXT NOT NULL CHECK (direction IN ('minimize', 'maximize'))")).toBe(false);
    // The migrations that did decide are what the SQL pattern catches.
    expect(offences([join(ROOT, 'migrations', '006_read_summaries.sql'), join(ROOT, 'migrations', 'postgres', '005_read_summaries.sql')], [SQL]).length).toBeGreaterThan(4);
  });
});
