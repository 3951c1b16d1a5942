/**
 * Page tokens are signed with the database's secret (src/domain/studies/page-token.ts): a token made
 * under one secret is refused under another, through the class and through the Paginator that reads
 * the secret from storage (two databases, as two deployments). A signature that ignored the secret (a
 * constant key) passed every other test under mutation testing.
 */
import { describe, expect, it } from 'vitest';
import { InvalidPageTokenError } from '../../src/domain/common/errors.js';
import { PageTokens, Paginator } from '../../src/domain/studies/page-token.js';

/** A storage with only a pagination secret. */
const storageWith = (secret: string) => ({ getSetting: async (key: string) => (key === 'page_token_secret' ? secret : null) });

describe('page tokens and the secret', () => {
  it('a token made under one secret decodes under that secret and is refused under any other', () => {
    const a = new PageTokens('secret-a');
    const token = a.encode('studies:default', 'cursor-7');
    expect(a.decode('studies:default', token)).toBe('cursor-7');
    for (const other of ['secret-b', 'secret-a ', '', 'SECRET-A']) {
      expect(() => new PageTokens(other).decode('studies:default', token), other).toThrow(InvalidPageTokenError);
    }
  });

  it('two secrets sign the same listing position differently', () => {
    expect(new PageTokens('one').encode('trials:s:ALL', '12')).not.toBe(new PageTokens('two').encode('trials:s:ALL', '12'));
  });

  it('a Paginator refuses a token of a database with another secret (another deployment), and accepts its own', async () => {
    const pages = (secret: string) => new Paginator(storageWith(secret));
    const read = async (after: string | null) => ({ items: [after], next: after === null ? 'p2' : null });
    const first = await pages('db-1').page('studies:t', null, read);
    expect(first.nextPageToken).not.toBeNull();
    const own = await pages('db-1').page('studies:t', first.nextPageToken, read);
    expect(own.items).toEqual(['p2']);
    await expect(pages('db-2').page('studies:t', first.nextPageToken, read)).rejects.toBeInstanceOf(InvalidPageTokenError);
  });
});
