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
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ApiKeyRecord, Storage } from '../storage/index.js';
import { ValidationError } from './errors.js';

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

export interface AuthenticatorDeps {
  storage: Pick<Storage, 'findActiveApiKey' | 'hasActiveApiKeys'>;
  envKeys?: readonly EnvApiKey[];
  /**
   * Whether a request without a key may act as the default tenant when no key exists at all.
   * Decided once at boot; even then, as soon as a key is created (e.g. by the CLI while the server
   * runs) every request needs one. A server started with keys never falls back to open, even if
   * every key is later revoked.
   */
  allowOpen: boolean;
}

export class Authenticator {
  private readonly envByHash: Map<string, { tenantId: string; keyId: string; keyHash: string }>;

  constructor(private readonly deps: AuthenticatorDeps) {
    this.envByHash = new Map((deps.envKeys ?? []).map((k, i) => [k.keyHash, { tenantId: k.tenantId, keyId: `env-${i + 1}`, keyHash: k.keyHash }]));
  }

  /** Whether the server is (currently) running without keys. */
  async isOpen(): Promise<boolean> {
    return this.deps.allowOpen && this.envByHash.size === 0 && !(await this.deps.storage.hasActiveApiKeys());
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
    const row = await this.deps.storage.findActiveApiKey(hash);
    if (row && sameHash(row.keyHash, hash)) return { ok: true, principal: { tenantId: row.tenantId, keyId: row.id } };
    return { ok: false, reason: 'invalid' };
  }
}

export interface ApiKeyServiceDeps {
  storage: Pick<Storage, 'createApiKey' | 'listApiKeys' | 'revokeApiKey'>;
  now?: () => Date;
}

/** Key management for the CLI: the plaintext key leaves this class once, from `create`. */
export class ApiKeyService {
  private readonly now: () => Date;

  constructor(private readonly deps: ApiKeyServiceDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  async create(tenant: string, label: string | null = null): Promise<{ key: string; record: ApiKeyRecord }> {
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
    return { key, record };
  }

  list(): Promise<ApiKeyRecord[]> {
    return this.deps.storage.listApiKeys();
  }

  revoke(id: string): Promise<boolean> {
    return this.deps.storage.revokeApiKey(id, this.now().toISOString());
  }
}
