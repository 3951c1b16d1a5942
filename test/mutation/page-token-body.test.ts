/**
 * What a page token's body must be once its signature is authentic (src/domain/studies/page-token.ts):
 * version 2, a 16-byte IV, whole 32-byte blocks, a length field within the plaintext. Only a holder of
 * the secret can sign a body, so the tokens below are made here with the keys derived as the module's
 * header documents (HMAC-SHA-256 of the secret over "probnes page token v2: <purpose>"), and encrypted
 * with AES-256-CTR as encode() does. Each check of decode() is one case: without it, a malformed body
 * signed under the secret would be read as a cursor (or throw something other than
 * invalid_page_token). Also: encode() pads to whole blocks, refuses an over-long cursor, and is
 * deterministic per scope and cursor; the Paginator reads the secret once.
 */
import { createCipheriv, createHmac } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { InvalidPageTokenError } from '../../src/domain/common/errors.js';
import { PageTokens, Paginator } from '../../src/domain/studies/page-token.js';

const SECRET = 'the-database-secret';
const SCOPE = 'studies:tenant-a';
const derive = (purpose: string) => createHmac('sha256', SECRET).update(`probnes page token v2: ${purpose}`).digest();
const encKey = derive('encryption');
const macKey = derive('authentication');
const sign = (body: string) => createHmac('sha256', macKey).update(SCOPE).update('\0').update(body).digest().subarray(0, 16).toString('base64url');

/** A token for `plain` (already padded or not, as the case needs), with the given version byte and IV length. */
function forged(plain: Buffer, { version = 2, ivBytes = 16 } = {}): string {
  const iv = Buffer.alloc(16, 7);
  const cipher = createCipheriv('aes-256-ctr', encKey, iv);
  const body = Buffer.concat([Buffer.of(version), iv.subarray(0, ivBytes), cipher.update(plain), cipher.final()]).toString('base64url');
  return `${body}.${sign(body)}`;
}
/** A well-formed plaintext: the 2-byte length, the cursor, zero padding to `blocks` × 32 bytes. */
function plaintext(cursor: string, blocks = 1, length = Buffer.byteLength(cursor)): Buffer {
  const p = Buffer.alloc(blocks * 32);
  p.writeUInt16BE(length, 0);
  Buffer.from(cursor).copy(p, 2);
  return p;
}

// Instances are made inside each test, not at collection: a mutant of the constructor (the key
// derivation) is active only while a test runs.
describe('page tokens: an authentic body is still checked', () => {
  let tokens: PageTokens;
  beforeEach(() => {
    tokens = new PageTokens(SECRET);
  });

  it('the derivation here is the module\'s: a well-formed token made here decodes to its cursor', () => {
    expect(tokens.decode(SCOPE, forged(plaintext('cursor-42')))).toBe('cursor-42');
    expect(tokens.decode(SCOPE, forged(plaintext('x'.repeat(40), 2)))).toBe('x'.repeat(40));
  });

  it('refuses another version, a short body, a body that is not whole blocks, and a length past the plaintext', () => {
    const cases: [string, string][] = [
      ['version 1', forged(plaintext('c'), { version: 1 })],
      ['version 3', forged(plaintext('c'), { version: 3 })],
      ['no ciphertext block', forged(Buffer.alloc(0))],
      ['an IV of 15 bytes (the body one byte short)', forged(plaintext('c'), { ivBytes: 15 })],
      ['31 bytes of ciphertext', forged(plaintext('c').subarray(0, 31))],
      ['33 bytes of ciphertext', forged(Buffer.concat([plaintext('c'), Buffer.of(0)]))],
      ['a length of 31 in one block (30 bytes follow it)', forged(plaintext('c', 1, 31))],
      ['a length of 65,535', forged(plaintext('c', 1, 65535))],
    ];
    for (const [what, token] of cases) expect(() => tokens.decode(SCOPE, token), what).toThrow(InvalidPageTokenError);
  });

  it('accepts a length that fills the block exactly (30 bytes after the length field)', () => {
    expect(tokens.decode(SCOPE, forged(plaintext('y'.repeat(30), 1)))).toBe('y'.repeat(30));
  });

  it('refuses a token with a third part, an empty part, or no signature', () => {
    const good = tokens.encode(SCOPE, 'c');
    const [body, sig] = good.split('.') as [string, string];
    for (const bad of [`${good}.x`, `${good}.`, `.${sig}`, `${body}.`, body, '']) expect(() => tokens.decode(SCOPE, bad), JSON.stringify(bad)).toThrow(InvalidPageTokenError);
  });

  it('refuses a signature of another length that shares the right prefix', () => {
    const good = tokens.encode(SCOPE, 'c');
    expect(() => tokens.decode(SCOPE, `${good}A`)).toThrow(InvalidPageTokenError);
    expect(() => tokens.decode(SCOPE, good.slice(0, -1))).toThrow(InvalidPageTokenError);
  });
});

describe('page tokens: what encode writes', () => {
  let tokens: PageTokens;
  beforeEach(() => {
    tokens = new PageTokens(SECRET);
  });
  const bodyBytes = (t: string) => Buffer.from(t.split('.')[0]!, 'base64url').length;

  it('pads the plaintext to whole 32-byte blocks: 30 cursor bytes fit one block, 31 need two', () => {
    expect(bodyBytes(tokens.encode(SCOPE, ''))).toBe(1 + 16 + 32);
    expect(bodyBytes(tokens.encode(SCOPE, 'z'.repeat(30)))).toBe(1 + 16 + 32);
    expect(bodyBytes(tokens.encode(SCOPE, 'z'.repeat(31)))).toBe(1 + 16 + 64);
    expect(tokens.decode(SCOPE, tokens.encode(SCOPE, 'z'.repeat(31)))).toBe('z'.repeat(31));
  });

  it('carries cursors up to 1,024 bytes and refuses longer ones', () => {
    const longest = 'é'.repeat(512); // 1,024 bytes in UTF-8
    expect(tokens.decode(SCOPE, tokens.encode(SCOPE, longest))).toBe(longest);
    expect(() => tokens.encode(SCOPE, `${longest}a`)).toThrow(/1025 bytes; at most 1024/);
  });

  it('is deterministic for one scope and cursor, and differs with either', () => {
    const t = tokens.encode(SCOPE, 'cursor');
    expect(tokens.encode(SCOPE, 'cursor')).toBe(t);
    expect(tokens.encode(SCOPE, 'cursos')).not.toBe(t);
    // The IV depends on the scope too: the same cursor in another listing shares no IV.
    const iv = (x: string) => Buffer.from(x.split('.')[0]!, 'base64url').subarray(1, 17).toString('hex');
    expect(iv(tokens.encode('trials:s:*', 'cursor'))).not.toBe(iv(t));
    expect(iv(tokens.encode(`${SCOPE}\u0000`, 'cursor'))).not.toBe(iv(t));
    // Scope and cursor are separated in the IV's input: "ab" + "c" is not "a" + "bc".
    expect(iv(tokens.encode('ab', 'c'))).not.toBe(iv(tokens.encode('a', 'bc')));
  });

  it('the IV is the documented one: HMAC-SHA-256 under the derived IV key of scope, a zero byte and the cursor, 16 bytes', () => {
    const ivKey = derive('iv');
    const expected = createHmac('sha256', ivKey).update(SCOPE).update('\0').update('cursor').digest().subarray(0, 16).toString('hex');
    expect(Buffer.from(tokens.encode(SCOPE, 'cursor').split('.')[0]!, 'base64url').subarray(1, 17).toString('hex')).toBe(expected);
  });

  it('a Paginator on a database without a pagination secret answers storage_not_ready', async () => {
    const pages = new Paginator({ getSetting: async () => null });
    await expect(pages.page(SCOPE, null, async () => ({ items: [], next: null }))).rejects.toMatchObject({ code: 'storage_not_ready', message: expect.stringContaining('no pagination secret') });
  });

  it('a Paginator reads the secret once and keeps it', async () => {
    let reads = 0;
    const pages = new Paginator({ getSetting: async () => (reads++, SECRET) });
    const read = async (after: string | null) => ({ items: [after], next: after === null ? 'p2' : null });
    const first = await pages.page(SCOPE, null, read);
    await pages.page(SCOPE, first.nextPageToken, read);
    await pages.page(SCOPE, null, read);
    expect(reads).toBe(1);
  });
});
