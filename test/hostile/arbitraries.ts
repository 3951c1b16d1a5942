/**
 * Generators of hostile input: numbers JSON cannot or should not carry, numbers as strings, wrong
 * types, deep nesting, unicode and control characters, SQL-looking text, and mutations of a valid
 * body (a field removed, replaced, or an unknown one added).
 */
import fc from 'fast-check';
import { Raw } from './harness.js';

/** Number tokens as raw JSON text: invalid JSON (NaN, Infinity), overflow (1e999), extremes, -0. */
export const rawNumber = fc
  .constantFrom('NaN', 'Infinity', '-Infinity', '1e999', '-1e999', '1e308', '-1e308', '1.7976931348623157e308', '-0', '0', '-0.0', '5e-324', '1e-400', '9007199254740993', '-1', '0.5', '1e21', '2', '3')
  .map((t) => new Raw(t));

/** The same values, and some others, as strings (a client that quotes its numbers). */
export const numberAsString = fc.constantFrom('NaN', 'Infinity', '-Infinity', '1e308', '1e999', '-0', '0', '1', '', ' ', '0x10', '1_000', '١');

export const SQLISH = [
  "'; DROP TABLE studies; --",
  "1' OR '1'='1",
  '" OR ""="',
  'x); DELETE FROM trials; --',
  "Robert'); PRAGMA writable_schema=1;--",
  '%',
  '_',
  '\\',
  "' UNION SELECT key_hash FROM api_keys --",
];

const controlChars = fc.string({ unit: fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 8 });

/** Strings nobody should send: control characters, lone surrogates, bidi overrides, SQL, very long ones. */
export const hostileString = fc.oneof(
  fc.constantFrom(...SQLISH),
  controlChars,
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom('\u0000', 'a\u0000b', '\ud800', '\udfff', 'x\u202e\u2066', '💥🧪', 'ǅ', '\uFEFFx', '../../etc/passwd', '%00', '%2F', 'null', 'undefined', '__proto__', 'constructor'),
  fc.constantFrom('x'.repeat(201), 'y'.repeat(4097), 'z'.repeat(70000)),
);

/** Deeply nested JSON, as text (arrays and objects; up to 100 000 levels). */
export const deepJson = fc
  .tuple(fc.constantFrom(50, 1000, 10_000, 100_000), fc.boolean())
  .map(([d, arrays]) => new Raw(arrays ? '['.repeat(d) + ']'.repeat(d) : '{"a":'.repeat(d) + '1' + '}'.repeat(d)));

/** Anything a field might wrongly receive. */
export const wrongValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: rawNumber },
  { weight: 2, arbitrary: numberAsString },
  { weight: 2, arbitrary: hostileString },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, [], {}, [1, 2], { a: 1 }, [[1], [2, 3]], [null]) },
  { weight: 1, arbitrary: deepJson },
  { weight: 1, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.integer({ min: -3, max: 200 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

/** Keys of unknown fields, including the ones prototype-pollution attempts use. */
export const extraKey = fc.oneof(fc.constantFrom('__proto__', 'constructor', 'prototype', 'extra', '', ' name', 'NAME', '$where'), fc.string({ maxLength: 10 }));

type Path = (string | number)[];

function paths(v: unknown, at: Path = []): Path[] {
  const out: Path[] = [at];
  if (v instanceof Raw) return out;
  if (Array.isArray(v)) v.forEach((x, i) => out.push(...paths(x, [...at, i])));
  else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) out.push(...paths(x, [...at, k]));
  return out;
}

function clone<T>(v: T): T {
  if (v instanceof Raw) return v;
  if (Array.isArray(v)) return v.map(clone) as T;
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, clone(x)])) as T;
  return v;
}

export interface Mutation {
  pick: number;
  op: 'replace' | 'delete' | 'add' | 'duplicate';
  value: unknown;
  key: string;
}

export const mutation: fc.Arbitrary<Mutation> = fc.record({
  pick: fc.nat(),
  op: fc.constantFrom('replace', 'replace', 'replace', 'delete', 'add', 'duplicate'),
  value: wrongValue,
  key: extraKey,
});

/** Apply 1–3 mutations to a copy of a valid body (each at a node picked among all its nodes). */
export function mutate(valid: unknown, ms: readonly Mutation[]): unknown {
  let body = clone(valid);
  for (const original of ms) {
    // Generated constants ([], {}) are shared between runs: insert copies, never the instances.
    const m = { ...original, value: clone(original.value) };
    const all = paths(body);
    const at = all[m.pick % all.length]!;
    if (at.length === 0) {
      if (m.op === 'replace') body = m.value;
      else if (m.op === 'add' && body !== null && typeof body === 'object' && !Array.isArray(body)) (body as Record<string, unknown>)[m.key] = m.value;
      continue;
    }
    const parent = at.slice(0, -1).reduce<unknown>((o, k) => (o as Record<string | number, unknown>)[k], body) as Record<string | number, unknown> | unknown[];
    const last = at[at.length - 1]!;
    if (m.op === 'replace') (parent as Record<string | number, unknown>)[last] = m.value;
    else if (m.op === 'delete') {
      if (Array.isArray(parent)) parent.splice(Number(last), 1);
      else delete (parent as Record<string, unknown>)[last];
    } else if (m.op === 'duplicate' && Array.isArray(parent)) parent.push(clone(parent[Number(last)]));
    else {
      const target = (parent as Record<string | number, unknown>)[last];
      if (target !== null && typeof target === 'object' && !Array.isArray(target) && !(target instanceof Raw)) (target as Record<string, unknown>)[m.key] = m.value;
      else (parent as Record<string | number, unknown>)[last] = m.value;
    }
  }
  return body;
}

export const mutations = fc.array(mutation, { minLength: 1, maxLength: 3 });

/** A path segment a client might put where an id goes (URL-encoded by the caller). */
export const hostileId = fc.oneof(
  hostileString.filter((s) => s.length > 0 && s.length <= 300),
  numberAsString.filter((s) => s.trim().length > 0),
  fc.constantFrom('0', '-1', '1.5', '1e3', '9007199254740993', '99999999999999999999', '0x1', ' 1', '1 ', 'study-0001 ', 'STUDY-0001', 'study-0001%00'),
);

/** Raw URL segments that are not valid percent-encoding or UTF-8 (sent as they are, not encoded). */
export const RAW_SEGMENTS = ['%', '%zz', '%ED%A0%80', '%C0%AF', '%FF', '%00', '..', '%2e%2e', '%E0%A4%A'];

/** A query-string value (URL-encoded by the caller). */
export const hostileQueryValue = fc.oneof(numberAsString, hostileString.filter((s) => s.length <= 5000), fc.constantFrom('1', '50', '1000', '1001', '1e3', '0', '-0', '101', '1.0', '1.5'));
