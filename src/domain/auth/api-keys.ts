/**
 * API keys: generation, hashing, and turning a presented bearer key into a tenant.
 *
 * Why SHA-256 and not bcrypt/argon2: those are for low-entropy secrets (passwords), where an
 * attacker with the hashes can enumerate likely guesses and a slow hash makes each guess costly.
 * Our keys carry 256 bits from the operating system's CSPRNG, so there is nothing to enumerate:
 * inverting one SHA-256 of a 256-bit random string is infeasible however fast the hash is. A fast,
 * unsalted hash also lets us find the key by an indexed equality lookup (a salted or slow hash
 * would force comparing against every row, or cost tens of milliseconds per request).
 * Keys supplied through the environment must be at least 32 characters for the same reason.
 *
 * Timing: the lookup is by the hash of the presented key, so how long it takes says nothing about
 * which stored key shares a prefix with the guess; the final comparison still uses timingSafeEqual.
 *
 * Caching: every request authenticates, and asking the database each time (which key has this hash;
 * in open mode, whether the server is keyed) was a visible share of a small request's cost. The
 * Authenticator keeps both answers for `cacheTtlMs` (1 s by default). A key created or revoked
 * through this process (ApiKeyService, which the CLI and the tests use) clears every cache at once;
 * one created or revoked by another process (the CLI next to a running server) takes effect within
 * the TTL.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ApiKeyRecord, KeysStore, StudiesStore } from '../../storage/index.js';
import { ValidationError } from '../common/errors.js';

export const KEY_PREFIX = 'pnk_';
/** Bytes of CSPRNG output in a generated key (256 bits). */
export const KEY_BYTES = 32;
/** The shortest key accepted from the environment (≈ 190 bits even for an alphanumeric string). */
export const MIN_ENV_KEY_LENGTH = 32;
/** Longer bearer values are rejected unhashed; no valid key comes close. */
const MAX_PRESENTED_LENGTH = 512;
/** Tenant names become tenant ids: short, printable, no separators that config files use. */
export const TENANT_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** The tenant that owns everything while the server runs without keys (created by migration 001). */
export const DEFAULT_TENANT = 'default';

export function generateApiKey(): string {
  return KEY_PREFIX + randomBytes(KEY_BYTES).toString('base64url');
}

/** Lower-case hex SHA-256 of the key's UTF-8 bytes; what the database stores. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** A key configured in the environment: its tenant and hash (the key itself is never kept). */
export interface EnvApiKey {
  tenantId: string;
  keyHash: string;
}

export type Principal = { tenantId: string; keyId: string | null };
export type AuthOutcome = { ok: true; principal: Principal } | { ok: false; reason: 'missing' | 'invalid' };

/** Longest time a cached answer is used before the database is asked again. */
export const AUTH_CACHE_TTL_MS = 1000;
/** Cached lookups per Authenticator: bounds what a flood of made-up keys can make it hold. */
const MAX_CACHED_LOOKUPS = 10_000;

/**
 * Moves on every key creation or revocation made through this process; an Authenticator that sees
 * it move forgets what it cached. Process-wide, because the CLI's ApiKeyService and the server's
 * Authenticator may sit on different connections to the same file.
 */
let keyChanges = 0;

/** Tells every Authenticator of the process that its cached answers may be wrong. */
export function apiKeysChanged(): void {
  keyChanges++;
}

export interface AuthenticatorDeps {
  storage: Pick<KeysStore, 'findActiveApiKey' | 'isKeyed'>;
  envKeys?: readonly EnvApiKey[];
  /**
   * Whether a request without a key may act as the default tenant while the database is not keyed
   * (Storage.isKeyed). Decided once at boot; even then, as soon as a key is created (e.g. by the CLI
   * while the server runs) every request needs one, and keeps needing one when every key is later
   * revoked: only `probnes keys open --confirm` lets requests without a key in again. Fail closed.
   */
  allowOpen: boolean;
  /** How long answers from storage are reused (default AUTH_CACHE_TTL_MS; 0 asks every time). */
  cacheTtlMs?: number;
  /** Monotonic milliseconds (tests pass a fake clock). */
  clock?: () => number;
}

type StoredKey = { tenantId: string; keyId: string; keyHash: string };

export class Authenticator {
  private readonly envByHash: Map<string, StoredKey>;
  private readonly ttlMs: number;
  private readonly clock: () => number;
  /** The value of keyChanges the cached answers were read under. */
  private seenChanges = keyChanges;
  /** Whether the database is keyed (Storage.isKeyed), while fresh. */
  private anyKeys: { value: boolean; until: number } | null = null;
  /** Hash → the active key with that hash, or null for none (unknown and revoked keys are cached too). */
  private readonly byHash = new Map<string, { key: StoredKey | null; until: number }>();

  constructor(private readonly deps: AuthenticatorDeps) {
    this.envByHash = new Map((deps.envKeys ?? []).map((k, i) => [k.keyHash, { tenantId: k.tenantId, keyId: `env-${i + 1}`, keyHash: k.keyHash }]));
    this.ttlMs = deps.cacheTtlMs ?? AUTH_CACHE_TTL_MS;
    this.clock = deps.clock ?? (() => performance.now());
  }

  /** Forgets the cache if a key changed through this process since it was filled. */
  private current(): void {
    if (this.seenChanges === keyChanges) return;
    this.seenChanges = keyChanges;
    this.anyKeys = null;
    this.byHash.clear();
  }

  /** Whether the server is (currently) running without keys. */
  async isOpen(): Promise<boolean> {
    if (!this.deps.allowOpen || this.envByHash.size > 0) return false;
    this.current();
    if (this.anyKeys && this.clock() < this.anyKeys.until) return !this.anyKeys.value;
    const changes = keyChanges;
    const value = await this.deps.storage.isKeyed();
    // A key created while the query ran must not be hidden behind a stale answer.
    if (changes === keyChanges) this.anyKeys = { value, until: this.clock() + this.ttlMs };
    return !value;
  }

  /** The active stored key with this hash, from the cache while fresh. */
  private async stored(hash: string): Promise<StoredKey | null> {
    this.current();
    const hit = this.byHash.get(hash);
    if (hit && this.clock() < hit.until) return hit.key;
    const changes = keyChanges;
    const row = await this.deps.storage.findActiveApiKey(hash);
    const key = row ? { tenantId: row.tenantId, keyId: row.id, keyHash: row.keyHash } : null;
    // A key revoked while the query ran must not stay valid behind a stale answer.
    if (changes === keyChanges && this.ttlMs > 0) {
      this.byHash.delete(hash);
      // Oldest first out: Map iterates in insertion order.
      if (this.byHash.size >= MAX_CACHED_LOOKUPS) this.byHash.delete(this.byHash.keys().next().value!);
      this.byHash.set(hash, { key, until: this.clock() + this.ttlMs });
    }
    return key;
  }

  /** `presented`: the bearer credential, or null when the request carried none. */
  async authenticate(presented: string | null): Promise<AuthOutcome> {
    if (presented === null) {
      return (await this.isOpen()) ? { ok: true, principal: { tenantId: DEFAULT_TENANT, keyId: null } } : { ok: false, reason: 'missing' };
    }
    if (presented.length === 0 || presented.length > MAX_PRESENTED_LENGTH) return { ok: false, reason: 'invalid' };
    const hash = hashApiKey(presented);
    const env = this.envByHash.get(hash);
    if (env && sameHash(env.keyHash, hash)) return { ok: true, principal: { tenantId: env.tenantId, keyId: env.keyId } };
    const key = await this.stored(hash);
    if (key && sameHash(key.keyHash, hash)) return { ok: true, principal: { tenantId: key.tenantId, keyId: key.keyId } };
    return { ok: false, reason: 'invalid' };
  }
}

export interface ApiKeyServiceDeps {
  storage: Pick<KeysStore, 'createApiKey' | 'listApiKeys' | 'revokeApiKey' | 'reopenWithoutKeys'> & Pick<StudiesStore, 'listStudies'>;
  now?: () => Date;
}

/**
 * Key management for the CLI: the plaintext key leaves this class once, from `create`.
 *
 * Studies created while the server ran open belong to tenant `default`, and stay there when keys
 * appear: nothing moves silently between tenants. A key for `default` reaches them; `create` says
 * so (`defaultStudiesUnreachable`) when it makes the first key of another tenant while `default`
 * has studies and no key of its own.
 */
export class ApiKeyService {
  private readonly now: () => Date;

  constructor(private readonly deps: ApiKeyServiceDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  async create(tenant: string, label: string | null = null): Promise<{ key: string; record: ApiKeyRecord; defaultStudiesUnreachable: boolean }> {
    const errors = [];
    if (!TENANT_PATTERN.test(tenant)) errors.push({ path: '/tenant', message: 'must be 1–64 letters, digits, ".", "_" or "-", starting with a letter or digit' });
    if (label !== null && (label.length > 200 || /\p{Cc}/u.test(label))) errors.push({ path: '/label', message: 'must be at most 200 characters without control characters' });
    if (errors.length > 0) throw new ValidationError(errors);
    const key = generateApiKey();
    const record = await this.deps.storage.createApiKey({
      id: `key_${randomBytes(8).toString('hex')}`,
      tenantId: tenant,
      keyHash: hashApiKey(key),
      label,
      createdAt: this.now().toISOString(),
    });
    // An open server in this process must demand keys from now on, not after its cache expires.
    apiKeysChanged();
    return { key, record, defaultStudiesUnreachable: tenant !== DEFAULT_TENANT && (await this.defaultStudiesUnreachable()) };
  }

  /** Whether tenant `default` owns studies (made while the server ran open) that no active key reaches. */
  private async defaultStudiesUnreachable(): Promise<boolean> {
    const keys = await this.deps.storage.listApiKeys();
    if (keys.some((k) => k.tenantId === DEFAULT_TENANT && k.revokedAt === null)) return false;
    return (await this.deps.storage.listStudies(DEFAULT_TENANT, { after: null, limit: 1 })).items.length > 0;
  }

  /**
   * Lets requests without a key in again, as tenant `default` (an explicit operator decision:
   * revoking the last key does not do it). False while an unrevoked key exists.
   */
  async reopen(): Promise<boolean> {
    const reopened = await this.deps.storage.reopenWithoutKeys();
    apiKeysChanged();
    return reopened;
  }

  list(): Promise<ApiKeyRecord[]> {
    return this.deps.storage.listApiKeys();
  }

  async revoke(id: string): Promise<boolean> {
    const revoked = await this.deps.storage.revokeApiKey(id, this.now().toISOString());
    // Refused from this moment by every Authenticator of the process (see the header).
    apiKeysChanged();
    return revoked;
  }
}
