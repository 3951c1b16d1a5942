/**
 * Page tokens reveal nothing: the study list's cursor is a sequence number shared by all tenants,
 * and a readable token told a tenant how many studies others had created between two of its own.
 * A token carries neither its cursor nor its scope in any readable form, and its length does not
 * depend on the cursor; it is still signed (under the database's secret) and bound to its listing,
 * so a forged token, one of another tenant, one of another listing or one signed under another
 * secret is refused with 400 invalid_page_token.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { hashApiKey } from '../../src/domain/auth/api-keys.js';
import { InvalidPageTokenError } from '../../src/domain/common/errors.js';
import { PageTokens } from '../../src/domain/studies/page-token.js';
import { SqliteStorage, type Storage } from '../../src/storage/index.js';
import { expectProblem } from './harness.js';

const KEY_A = 'a'.repeat(40);
const KEY_B = 'b'.repeat(40);
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/** Whether `bytes` hold `text` (as UTF-8 or UTF-16), or anything JSON-like. */
function readable(bytes: Buffer, text: string): boolean {
  return bytes.includes(Buffer.from(text, 'utf8')) || bytes.includes(Buffer.from(text, 'utf16le')) || bytes.includes(Buffer.from('{"'));
}

describe('PageTokens', () => {
  const tokens = new PageTokens('secret-1');

  it('round-trips a cursor, but its bytes hold neither the cursor nor the scope, and its length does not depend on the cursor', () => {
    const lengths = new Set<number>();
    for (const after of ['1', '7', '42', '1000', '123456789', String(2 ** 53 - 1), '17:3', '']) {
      const token = tokens.encode('studies:alpha', after);
      expect(tokens.decode('studies:alpha', token)).toBe(after);
      const [body, sig] = token.split('.') as [string, string];
      expect(sig).toMatch(/^[A-Za-z0-9_-]{22}$/);
      const bytes = Buffer.from(body, 'base64url');
      if (after.length >= 2) expect(readable(bytes, after), after).toBe(false);
      expect(readable(bytes, 'studies'), after).toBe(false);
      expect(readable(bytes, 'alpha'), after).toBe(false);
      lengths.add(token.length);
    }
    expect([...lengths]).toHaveLength(1);
  });

  it('two counters an adjacent step apart share no byte of ciphertext position by position beyond chance', () => {
    // A readable or merely XOR-masked counter keeps most bytes equal between 1000 and 1001.
    const a = Buffer.from(tokens.encode('studies:alpha', '1000').split('.')[0]!, 'base64url');
    const b = Buffer.from(tokens.encode('studies:alpha', '1001').split('.')[0]!, 'base64url');
    expect(a.length).toBe(b.length);
    let equal = 0;
    for (let i = 1; i < a.length; i++) if (a[i] === b[i]) equal++;
    expect(equal).toBeLessThan(6);
  });

  it('refuses a token signed under another secret, for another scope, or altered in any character', () => {
    const token = tokens.encode('studies:alpha', '12');
    expect(() => new PageTokens('secret-2').decode('studies:alpha', token)).toThrow(InvalidPageTokenError);
    expect(() => tokens.decode('studies:beta', token)).toThrow(InvalidPageTokenError);
    expect(() => tokens.decode('trials:alpha', token)).toThrow(InvalidPageTokenError);
    for (let i = 0; i < token.length; i++) {
      if (token[i] === '.') continue;
      const altered = token.slice(0, i) + (token[i] === 'A' ? 'B' : 'A') + token.slice(i + 1);
      expect(() => tokens.decode('studies:alpha', altered), altered).toThrow(InvalidPageTokenError);
    }
    // The earlier, readable form with a correct signature of the old scheme is not accepted either.
    const old = Buffer.from(JSON.stringify({ v: 1, scope: 'studies:alpha', after: '0' })).toString('base64url');
    expect(() => tokens.decode('studies:alpha', `${old}.${token.split('.')[1]}`)).toThrow(InvalidPageTokenError);
  });
});

describe('GET /v1/studies page tokens between tenants', () => {
  let app: FastifyInstance;
  let storage: Storage;
  beforeAll(async () => {
    storage = SqliteStorage.open(':memory:');
    for (const t of ['alpha', 'beta']) await storage.ensureTenant(t, new Date().toISOString());
    app = await buildApp({
      config: { bodyLimit: 1024 * 1024, requestTimeoutMs: 30_000, rateLimitPerMinute: 0 },
      storage,
      auth: { envKeys: [{ tenantId: 'alpha', keyHash: hashApiKey(KEY_A) }, { tenantId: 'beta', keyHash: hashApiKey(KEY_B) }], allowOpen: false },
    });
    const create = async (key: string, name: string) => {
      const res = await app.inject({ method: 'POST', url: '/v1/studies', headers: bearer(key), payload: { name, method: 'random', parameters: [{ name: 'x', bounds: [0, 1] }] } });
      expect(res.statusCode).toBe(201);
    };
    // alpha's studies with 0, then 40, then 0 of beta's in between.
    await create(KEY_A, 'a1');
    await create(KEY_A, 'a2');
    for (let i = 0; i < 40; i++) await create(KEY_B, `b${i}`);
    await create(KEY_A, 'a3');
    await create(KEY_A, 'a4');
  });
  afterAll(async () => {
    await app.close();
    await storage.close();
  });

  async function pageTokens(key: string): Promise<string[]> {
    const out: string[] = [];
    let token: string | null = null;
    do {
      const res: { statusCode: number; json: () => { next_page_token: string | null } } = await app.inject({ method: 'GET', url: `/v1/studies?page_size=1${token ? `&page_token=${encodeURIComponent(token)}` : ''}`, headers: bearer(key) });
      expect(res.statusCode).toBe(200);
      token = res.json().next_page_token;
      if (token) out.push(token);
    } while (token);
    return out;
  }

  it('alpha\'s tokens are all of one length and hold no readable cursor, though beta created 40 studies between two of them', async () => {
    const tokens = await pageTokens(KEY_A);
    expect(tokens).toHaveLength(3);
    expect(new Set(tokens.map((t) => t.length)).size).toBe(1);
    for (const t of tokens) {
      const bytes = Buffer.from(t.split('.')[0]!, 'base64url');
      for (const n of ['1', '2', '42', '43', 'alpha', 'studies']) expect(readable(bytes, `"${n}"`) || readable(bytes, `:${n}`), `${t} ${n}`).toBe(false);
      expect(bytes.toString('latin1')).not.toMatch(/after|scope|"v"/);
    }
  });

  it('a token of another tenant, a forged one and one signed under another database\'s secret are refused with 400 invalid_page_token', async () => {
    const [alphaToken] = await pageTokens(KEY_A);
    const secret = await storage.getSetting('page_token_secret');
    expect(secret).toBeTruthy();
    const forged = [
      // alpha's token, presented by beta.
      { key: KEY_B, token: alphaToken! },
      // A token signed with the database's own secret in the old scheme, and the new one under another secret.
      { key: KEY_A, token: `${Buffer.from(JSON.stringify({ v: 1, scope: 'studies:alpha', after: '0' })).toString('base64url')}.${alphaToken!.split('.')[1]}` },
      { key: KEY_A, token: new PageTokens(`${secret}x`).encode('studies:alpha', '0') },
      // A valid token for alpha's list, of the beta scope: beta cannot make one without the secret.
      { key: KEY_B, token: new PageTokens('not-the-secret').encode('studies:beta', '0') },
    ];
    for (const { key, token } of forged) {
      const req = { method: 'GET' as const, url: `/v1/studies?page_token=${encodeURIComponent(token)}`, headers: bearer(key) };
      const res = await app.inject(req);
      expect(res.statusCode, token).toBe(400);
      expectProblem(req, res);
      expect(res.json().code).toBe('invalid_page_token');
    }
    // With the database's secret a token is accepted: the refusals above are not of every token.
    const own = new PageTokens(secret!).encode('studies:beta', '0');
    expect((await app.inject({ method: 'GET', url: `/v1/studies?page_size=1&page_token=${encodeURIComponent(own)}`, headers: bearer(KEY_B) })).statusCode).toBe(200);
  });
});
