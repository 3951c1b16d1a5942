/**
 * Opaque pagination tokens: the storage cursor plus what the listing was for, signed with an HMAC
 * so that a client can neither forge a position nor reuse one tenant's token for another.
 * The secret lives in the database (settings table), so tokens survive restarts and are valid on
 * every replica sharing the database.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Page, Storage } from '../../storage/index.js';
import { DomainError, InvalidPageTokenError } from '../common/errors.js';

interface TokenBody {
  v: 1;
  /** What is listed, e.g. `studies:<tenant>` or `trials:<study>:<state>`. */
  scope: string;
  after: string;
}

export class PageTokens {
  constructor(private readonly secret: string) {}

  encode(scope: string, after: string): string {
    const body = Buffer.from(JSON.stringify({ v: 1, scope, after } satisfies TokenBody)).toString('base64url');
    return `${body}.${this.sign(body)}`;
  }

  /** The storage cursor inside a token, or InvalidPageTokenError when it was altered or is for another listing. */
  decode(scope: string, token: string): string {
    const [body, sig, ...rest] = token.split('.');
    if (!body || !sig || rest.length > 0) throw new InvalidPageTokenError();
    const expected = Buffer.from(this.sign(body));
    const given = Buffer.from(sig);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new InvalidPageTokenError();
    let parsed: Partial<TokenBody>;
    try {
      parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Partial<TokenBody>;
    } catch {
      throw new InvalidPageTokenError();
    }
    if (parsed.v !== 1 || parsed.scope !== scope || typeof parsed.after !== 'string') throw new InvalidPageTokenError();
    return parsed.after;
  }

  private sign(body: string): string {
    // 128 bits of the HMAC is ample against forgery and keeps tokens short.
    return createHmac('sha256', this.secret).update(body).digest().subarray(0, 16).toString('base64url');
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
