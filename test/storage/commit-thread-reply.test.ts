/**
 * The writer thread answers a commit with the revision and the new trials' ids only; the loop keeps
 * the records it sent under those ids, so each id must name exactly the trial sent in its position,
 * for every optional field set or left out.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { newTrialRecord, SqliteStorage, type NewTrial } from '../../src/storage/index.js';
import { study } from './contract.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-reply-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

let s: SqliteStorage;
afterEach(async () => {
  await s.close();
});

const NOW = '2025-01-01T00:00:01.000Z';

describe('writer thread replies', () => {
  it('names the committed trials by id, in the order sent, each stored as sent', async () => {
    s = SqliteStorage.open(path.join(dir, 'r.db'), { writerThread: true });
    await s.createStudy(study('a'), { version: 1, state: {} });
    const newTrials: NewTrial[] = [
      { state: 'REQUESTED', generation: 0, parameters: { x: 0.25 }, point: [-0.5], source: 'suggested' },
      { state: 'ACTIVE', generation: 0, parameters: { x: 0.75 }, point: [0.5], source: 'suggested', clientId: 'w1', leaseExpiresAt: '2025-01-01T00:10:00.000Z' },
      { state: 'COMPLETED', generation: 0, parameters: { x: 0.1 }, point: [-0.8], source: 'external', value: 3.5, stderr: 0.25, completedAt: NOW },
      { state: 'COMPLETED', generation: 0, parameters: { x: 1 }, point: null, source: 'external', value: -2, stderr: null, completedAt: NOW },
    ];
    const res = await s.commitGeneration('a', { expectedRevision: 1, generation: 0, engineState: null, newTrials, now: NOW });
    expect(res).toEqual({ committed: true, revision: 1, trialIds: [1, 2, 3, 4] });
    for (const [i, t] of newTrials.entries()) {
      expect(await s.getTrial('a', i + 1)).toEqual(newTrialRecord('a', i + 1, t, NOW));
    }
  });

  it('answers a refused commit with its reason and no trials', async () => {
    s = SqliteStorage.open(path.join(dir, 'refused.db'), { writerThread: true });
    await s.createStudy(study('a'), { version: 1, state: {} });
    const newTrials: NewTrial[] = [{ state: 'REQUESTED', generation: 0, parameters: { x: 0.25 }, point: [-0.5], source: 'suggested' }];
    expect(await s.commitGeneration('a', { expectedRevision: 5, generation: 0, engineState: null, newTrials, now: NOW })).toEqual({ committed: false, reason: 'revision_conflict' });
    expect(await s.commitGeneration('nope', { expectedRevision: 1, generation: 0, engineState: null, newTrials, now: NOW })).toEqual({ committed: false, reason: 'study_not_found' });
  });
});
