/**
 * The keys aggregate's contract (KeysStore), run against every backend by storageContract: keys are
 * stored by hash, revoked keys are never found, and whether the server is keyed follows the keys
 * and the recorded mode (storage.ts, isKeyed).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { Storage } from '../../src/storage/index.js';

const key = (id: string, tenantId: string, at: string) => ({ id, tenantId, keyHash: `${id.padEnd(8, '0')}`.repeat(8), label: `label ${id}`, createdAt: at });

export function keysContract(storage: () => Storage): void {
  describe('keys (KeysStore)', () => {
    let s: Storage;
    beforeEach(() => {
      s = storage();
    });

    it('stores a key by its hash, finds it until it is revoked, and lists every key oldest first', async () => {
      expect(await s.isKeyed()).toBe(false);
      expect(await s.hasActiveApiKeys()).toBe(false);
      const b = await s.createApiKey(key('kb', 'team-b', '2025-01-01T00:00:02.000Z'));
      expect(b).toEqual({ ...key('kb', 'team-b', '2025-01-01T00:00:02.000Z'), revokedAt: null });
      await s.createApiKey(key('ka', 'team-a', '2025-01-01T00:00:01.000Z'));
      expect(await s.findActiveApiKey(key('kb', '', '').keyHash)).toMatchObject({ id: 'kb', tenantId: 'team-b' });
      expect(await s.findActiveApiKey('0'.repeat(64))).toBeNull();
      expect(await s.revokeApiKey('kb', '2025-01-01T00:00:03.000Z')).toBe(true);
      expect(await s.revokeApiKey('kb', '2025-01-01T00:00:04.000Z')).toBe(false);
      expect(await s.revokeApiKey('nope', '2025-01-01T00:00:04.000Z')).toBe(false);
      expect(await s.findActiveApiKey(key('kb', '', '').keyHash)).toBeNull();
      expect((await s.listApiKeys()).map((k) => [k.id, k.revokedAt])).toEqual([
        ['ka', null],
        ['kb', '2025-01-01T00:00:03.000Z'],
      ]);
    });

    it('stays keyed after the last key is revoked, until reopened; never reopens while a key is active', async () => {
      await s.createApiKey(key('k1', 'team-a', '2025-01-01T00:00:01.000Z'));
      expect(await s.hasActiveApiKeys()).toBe(true);
      expect(await s.reopenWithoutKeys()).toBe(false);
      expect(await s.isKeyed()).toBe(true);
      await s.revokeApiKey('k1', '2025-01-01T00:00:02.000Z');
      expect(await s.hasActiveApiKeys()).toBe(false);
      expect(await s.isKeyed()).toBe(true);
      expect(await s.reopenWithoutKeys()).toBe(true);
      expect(await s.isKeyed()).toBe(false);
      await s.markKeyed();
      expect(await s.isKeyed()).toBe(true);
    });

    it('creates a tenant once, with or without a key', async () => {
      await s.ensureTenant('team-c', '2025-01-01T00:00:01.000Z');
      await s.ensureTenant('team-c', '2025-01-01T00:00:02.000Z');
      // A key for an existing tenant does not fail on the tenant.
      await expect(s.createApiKey(key('kc', 'team-c', '2025-01-01T00:00:03.000Z'))).resolves.toMatchObject({ tenantId: 'team-c' });
    });
  });
}
