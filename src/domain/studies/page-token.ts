/**
 * Opaque pagination tokens: the storage cursor, encrypted, and an HMAC over it and what the listing
 * is for, so that a client can neither forge a position, nor reuse one tenant's token for another
 * (or one listing's for another), nor read anything from a token. The cursor is a storage position
 * (the study list's is a sequence number shared by all tenants: a readable one told a tenant how
 * many studies others had created between two of its own), so it is encrypted (AES-256-CTR), padded
 * to a whole number of 32-byte blocks so that its length says nothing either; the scope is bound by
 * the HMAC and not carried at all. Encryption is deterministic (the IV is an HMAC of scope and
 * cursor, as in SIV): the same position of the same listing always gives the same token.
 *
 * Token: base64url(version ‖ IV ‖ ciphertext) "." base64url(HMAC-SHA-256(scope ‖ 0 ‖ body), 128 bits).
 * The keys are derived from one secret, which lives in the database (settings table), so tokens
 * survive restarts, are valid on every replica sharing the database, and fail under another secret.
 * Tokens of the earlier, readable form (before this version) are refused as invalid_page_token.
 */
import { createCipheriv, createDecipheriv, createHmac, timingSafeEqual } from 'node:crypto';
import type { Page, Storage } from '../../storage/index.js';
import { DomainError, InvalidPageTokenError } from '../common/errors.js';

const VERSION = 2;
const IV_BYTES = 16;
const BLOCK = 32;
/** Longest cursor a token carries (every storage cursor is a few dozen characters). */
const MAX_CURSOR_BYTES = 1024;

export class PageTokens {
  private readonly encKey: Buffer;
  private readonly ivKey: Buffer;
  private readonly macKey: Buffer;

  constructor(secret: string) {
    const derive = (purpose: string) => createHmac('sha256', secret).update(`probnes page token v${VERSION}: ${purpose}`).digest();
    this.encKey = derive('encryption');
    this.ivKey = derive('iv');
    this.macKey = derive('authentication');
  }

  encode(scope: string, after: string): string {
    const cursor = Buffer.from(after, 'utf8');
    if (cursor.length > MAX_CURSOR_BYTES) throw new Error(`page cursor of ${cursor.length} bytes; at most ${MAX_CURSOR_BYTES}`);
    const plain = Buffer.alloc(Math.ceil((cursor.length + 2) / BLOCK) * BLOCK);
    plain.writeUInt16BE(cursor.length, 0);
    cursor.copy(plain, 2);
    const iv = createHmac('sha256', this.ivKey).update(scope).update('\0').update(cursor).digest().subarray(0, IV_BYTES);
    const cipher = createCipheriv('aes-256-ctr', this.encKey, iv);
    const body = Buffer.concat([Buffer.of(VERSION), iv, cipher.update(plain), cipher.final()]).toString('base64url');
    return `${body}.${this.sign(scope, body)}`;
  }

  /** The storage cursor inside a token, or InvalidPageTokenError when it was altered or is for another listing. */
  decode(scope: string, token: string): string {
    const [body, sig, ...rest] = token.split('.');
    if (!body || !sig || rest.length > 0) throw new InvalidPageTokenError();
    const expected = Buffer.from(this.sign(scope, body));
    const given = Buffer.from(sig);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new InvalidPageTokenError();
    // Authentic from here on: written by encode() under this secret for this scope.
    const raw = Buffer.from(body, 'base64url');
    const ciphertext = raw.subarray(1 + IV_BYTES);
    if (raw[0] !== VERSION || ciphertext.length < BLOCK || ciphertext.length % BLOCK !== 0) throw new InvalidPageTokenError();
    const decipher = createDecipheriv('aes-256-ctr', this.encKey, raw.subarray(1, 1 + IV_BYTES));
    const plain = Buffer.concat([decipher.update(ciphertext), decipher.final()]);
    const length = plain.readUInt16BE(0);
    if (length > plain.length - 2) throw new InvalidPageTokenError();
    return plain.subarray(2, 2 + length).toString('utf8');
  }

  private sign(scope: string, body: string): string {
    // 128 bits of the HMAC is ample against forgery and keeps tokens short.
    return createHmac('sha256', this.macKey).update(scope).update('\0').update(body).digest().subarray(0, 16).toString('base64url');
  }
}

/**
 * Cursor pagination over storage for the services that list (studies, trials): the secret is read
 * on first use and kept (it never changes once the database is migrated).
 */
export class Paginator {
  private tokens: PageTokens | null = null;

  constructor(private readonly storage: Pick<Storage, 'getSetting'>) {}

  /** One page of the listing `scope`: the client's token back to a storage cursor, the next cursor out as a token. */
  async page<T>(scope: string, pageToken: string | null | undefined, read: (after: string | null) => Promise<Page<T>>): Promise<{ items: T[]; nextPageToken: string | null }> {
    const tokens = await this.pageTokens();
    const after = pageToken ? tokens.decode(scope, pageToken) : null;
    const page = await read(after);
    return { items: page.items, nextPageToken: page.next === null ? null : tokens.encode(scope, page.next) };
  }

  private async pageTokens(): Promise<PageTokens> {
    if (!this.tokens) {
      const secret = await this.storage.getSetting('page_token_secret');
      if (!secret) throw new DomainError('unavailable', 'storage_not_ready', 'the database has no pagination secret; is it migrated?');
      this.tokens = new PageTokens(secret);
    }
    return this.tokens;
  }
}
