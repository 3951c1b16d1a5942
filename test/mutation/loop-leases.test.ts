/**
 * The loop's leases (src/domain/loop/lease.ts), its per-study lock (study-lock.ts) and its group of
 * requests per commit (commit-group.ts), each on its own: the HTTP tests reach them only through
 * whole requests, where an expiry one millisecond off, a lease list in another order or a lock
 * released early would go unseen. Expected values follow from the modules' contracts (their doc
 * comments), not from running them.
 */
import { describe, expect, it } from 'vitest';
import { budgetHeld, DEFAULT_CLIENT, expireLeases, heldBy, leaseExpiry, leaseTo, LEASES_LISTED } from '../../src/domain/loop/lease.js';
import { KeyedMutex } from '../../src/domain/loop/study-lock.js';
import { CommitGroups, type Outcome } from '../../src/domain/loop/commit-group.js';
import type { TrialRecord } from '../../src/storage/index.js';
import { standInSnapshot } from '../helpers/stand-in-snapshot.js';

type Trial = Pick<TrialRecord, 'trialId' | 'state' | 'clientId' | 'leaseExpiresAt'>;

/** A snapshot holding these trials, with StudySnapshot's inState/change/count semantics. */
const snapshot = (trials: Trial[], leaseSeconds = 60) => standInSnapshot(trials, { study: { leaseSeconds } });

const at = (iso: string) => new Date(iso);
const NOW = '2026-01-01T00:00:00.000Z';

describe('leases', () => {
  it('a lease runs leaseSeconds from now, to the millisecond', () => {
    expect(leaseExpiry(at(NOW), 90)).toBe('2026-01-01T00:01:30.000Z');
    expect(leaseExpiry(at('2026-01-01T00:00:00.250Z'), 0.5)).toBe('2026-01-01T00:00:00.750Z');
  });

  it('expires the ACTIVE trials whose lease ends at or before now, keeping their last holder', () => {
    const trials: Trial[] = [
      { trialId: 1, state: 'ACTIVE', clientId: 'a', leaseExpiresAt: '2025-12-31T23:59:59.999Z' },
      { trialId: 2, state: 'ACTIVE', clientId: 'b', leaseExpiresAt: NOW },
      { trialId: 3, state: 'ACTIVE', clientId: 'c', leaseExpiresAt: '2026-01-01T00:00:00.001Z' },
      { trialId: 4, state: 'ACTIVE', clientId: 'd', leaseExpiresAt: null },
      { trialId: 5, state: 'REQUESTED', clientId: null, leaseExpiresAt: '2025-01-01T00:00:00.000Z' },
    ];
    const snap = snapshot(trials);
    const expired = expireLeases(snap, at(NOW));
    expect(expired.map((t) => t.trialId)).toEqual([1, 2]);
    expect(snap.changes).toEqual([
      [1, { state: 'REQUESTED', leaseExpiresAt: null }],
      [2, { state: 'REQUESTED', leaseExpiresAt: null }],
    ]);
    expect(trials.map((t) => [t.state, t.clientId])).toEqual([
      ['REQUESTED', 'a'],
      ['REQUESTED', 'b'],
      ['ACTIVE', 'c'],
      ['ACTIVE', 'd'],
      ['REQUESTED', null],
    ]);
  });

  it('leases a trial to a client for the study\'s lease time, and re-leasing extends it', () => {
    const trials: Trial[] = [{ trialId: 7, state: 'REQUESTED', clientId: null, leaseExpiresAt: null }];
    const snap = snapshot(trials, 30);
    const t = leaseTo(snap, trials[0] as TrialRecord, 'w1', at(NOW));
    expect([t.state, t.clientId, t.leaseExpiresAt]).toEqual(['ACTIVE', 'w1', '2026-01-01T00:00:30.000Z']);
    leaseTo(snap, trials[0] as TrialRecord, 'w1', at('2026-01-01T00:00:20.000Z'));
    expect(trials[0]!.leaseExpiresAt).toBe('2026-01-01T00:00:50.000Z');
  });

  it('heldBy lists only the client\'s ACTIVE trials', () => {
    const trials: Trial[] = [
      { trialId: 1, state: 'ACTIVE', clientId: 'a', leaseExpiresAt: NOW },
      { trialId: 2, state: 'ACTIVE', clientId: 'b', leaseExpiresAt: NOW },
      { trialId: 3, state: 'REQUESTED', clientId: 'a', leaseExpiresAt: null },
      { trialId: 4, state: 'ACTIVE', clientId: 'a', leaseExpiresAt: NOW },
    ];
    expect(heldBy(snapshot(trials), 'a').map((t) => t.trialId)).toEqual([1, 4]);
    expect(heldBy(snapshot(trials), DEFAULT_CLIENT)).toEqual([]);
    expect(DEFAULT_CLIENT).toBe('default');
  });

  it('budgetHeld counts every state and lists leases soonest first, ties by trial id', () => {
    const trials: Trial[] = [
      { trialId: 5, state: 'ACTIVE', clientId: 'a', leaseExpiresAt: '2026-01-01T00:02:00.000Z' },
      { trialId: 3, state: 'ACTIVE', clientId: 'b', leaseExpiresAt: '2026-01-01T00:01:00.000Z' },
      { trialId: 9, state: 'ACTIVE', clientId: 'c', leaseExpiresAt: '2026-01-01T00:01:00.000Z' },
      { trialId: 2, state: 'ACTIVE', clientId: 'c', leaseExpiresAt: '2026-01-01T00:01:00.000Z' },
      { trialId: 4, state: 'ACTIVE', clientId: null, leaseExpiresAt: '2026-01-01T00:00:10.000Z' },
      { trialId: 6, state: 'ACTIVE', clientId: 'd', leaseExpiresAt: null },
      { trialId: 1, state: 'REQUESTED', clientId: null, leaseExpiresAt: null },
      { trialId: 7, state: 'COMPLETED', clientId: 'a', leaseExpiresAt: null },
      { trialId: 8, state: 'COMPLETED', clientId: 'a', leaseExpiresAt: null },
      { trialId: 10, state: 'FAILED', clientId: 'a', leaseExpiresAt: null },
    ];
    const held = budgetHeld(snapshot(trials), 20);
    expect(held).toEqual({
      maxTrials: 20,
      completed: 2,
      // every ACTIVE trial holds the budget, listed or not
      leased: 6,
      requested: 1,
      leases: [
        { trialId: 2, clientId: 'c', leaseExpiresAt: '2026-01-01T00:01:00.000Z' },
        { trialId: 3, clientId: 'b', leaseExpiresAt: '2026-01-01T00:01:00.000Z' },
        { trialId: 9, clientId: 'c', leaseExpiresAt: '2026-01-01T00:01:00.000Z' },
        { trialId: 5, clientId: 'a', leaseExpiresAt: '2026-01-01T00:02:00.000Z' },
      ],
    });
  });

  it('budgetHeld lists a later lease after a sooner one whatever their trial ids', () => {
    // In both orders of the list: a sort compares the pairs either way round.
    const later = { trialId: 1, state: 'ACTIVE', clientId: 'a', leaseExpiresAt: '2026-01-01T00:02:00.000Z' } as const;
    const sooner = { trialId: 2, state: 'ACTIVE', clientId: 'b', leaseExpiresAt: '2026-01-01T00:01:00.000Z' } as const;
    expect(budgetHeld(snapshot([{ ...later }, { ...sooner }]), 5).leases.map((l) => l.trialId)).toEqual([2, 1]);
    expect(budgetHeld(snapshot([{ ...sooner }, { ...later }]), 5).leases.map((l) => l.trialId)).toEqual([2, 1]);
  });

  it('budgetHeld lists at most LEASES_LISTED leases, the soonest', () => {
    const n = LEASES_LISTED + 5;
    const trials: Trial[] = Array.from({ length: n }, (_, i) => ({
      trialId: i + 1,
      state: 'ACTIVE' as const,
      clientId: 'w',
      // trial n expires first, trial 1 last
      leaseExpiresAt: new Date(Date.parse(NOW) + (n - i) * 1000).toISOString(),
    }));
    const held = budgetHeld(snapshot(trials), 1000);
    expect(LEASES_LISTED).toBe(100);
    expect(held.leased).toBe(n);
    expect(held.leases).toHaveLength(LEASES_LISTED);
    expect(held.leases[0]!.trialId).toBe(n);
    expect(held.leases[LEASES_LISTED - 1]!.trialId).toBe(6);
  });
});

const tick = () => new Promise((r) => setImmediate(r));

/** A promise the test settles. */
function gate<T = void>() {
  let open!: (v: T) => void;
  const p = new Promise<T>((r) => (open = r));
  return { p, open };
}

describe('KeyedMutex', () => {
  it('runs one holder of a key at a time, in arrival order, and keys apart in parallel', async () => {
    const m = new KeyedMutex();
    const log: string[] = [];
    const g1 = gate();
    const g2 = gate();
    const first = m.run('a', async () => {
      log.push('a1 start');
      await g1.p;
      log.push('a1 end');
      return 1;
    });
    const second = m.run('a', async () => {
      log.push('a2 start');
      return 2;
    });
    const other = m.run('b', async () => {
      log.push('b start');
      await g2.p;
      return 3;
    });
    await tick();
    expect(log).toEqual(['a1 start', 'b start']);
    expect(m.size).toBe(2);
    g1.open();
    expect(await first).toBe(1);
    expect(await second).toBe(2);
    expect(log).toEqual(['a1 start', 'b start', 'a1 end', 'a2 start']);
    // a's queue is empty: its key is forgotten while b is still held
    expect(m.size).toBe(1);
    g2.open();
    expect(await other).toBe(3);
    expect(m.size).toBe(0);
  });

  it('releases the key when the holder throws, and the error reaches its caller only', async () => {
    const m = new KeyedMutex();
    const failed = m.run('a', async () => {
      throw new Error('boom');
    });
    const next = m.run('a', async () => 'ran');
    await expect(failed).rejects.toThrow('boom');
    expect(await next).toBe('ran');
    expect(m.size).toBe(0);
  });

  it('keeps the key while a later waiter queued behind a finished holder', async () => {
    const m = new KeyedMutex();
    const log: string[] = [];
    const g = gate();
    const g2 = gate();
    const first = m.run('a', async () => g.p);
    const second = m.run('a', async () => {
      log.push('second start');
      await g2.p;
      log.push('second end');
    });
    g.open();
    await first;
    await tick();
    expect(log).toEqual(['second start']);
    // the first holder's release must not drop the queue the second still stands in: a third
    // request waits for the second
    const third = m.run('a', async () => {
      log.push('third');
    });
    await tick();
    expect(log).toEqual(['second start']);
    expect(m.size).toBe(1);
    g2.open();
    await Promise.all([second, third]);
    expect(log).toEqual(['second start', 'second end', 'third']);
    expect(m.size).toBe(0);
  });
});

describe('CommitGroups', () => {
  it('handles the requests that arrive while the study is busy as one group, each with its own outcome', async () => {
    const lock = new KeyedMutex();
    const groups = new CommitGroups<number, string>(lock);
    const busy = gate();
    const holder = lock.run('s', async () => busy.p);
    const seen: number[][] = [];
    const handle = async (reqs: number[]): Promise<Outcome<string>[]> => {
      seen.push(reqs);
      return reqs.map((r) => (r === 2 ? { ok: false, error: new Error('two') } : { ok: true, value: `v${r}` }));
    };
    const answers = [1, 2, 3].map((r) => groups.submit('s', 'g', r, handle));
    await tick();
    expect(seen).toEqual([]);
    busy.open();
    await holder;
    const settled = await Promise.allSettled(answers);
    expect(seen).toEqual([[1, 2, 3]]);
    expect(settled.map((s) => (s.status === 'fulfilled' ? s.value : (s.reason as Error).message))).toEqual(['v1', 'two', 'v3']);
    // the group closed when it started: a later request starts a new one
    expect(await groups.submit('s', 'g', 4, handle)).toBe('v4');
    expect(seen).toEqual([[1, 2, 3], [4]]);
  });

  it('a group holds at most maxGroup requests; the next opens another group', async () => {
    const lock = new KeyedMutex();
    const groups = new CommitGroups<number, number>(lock, 2);
    const busy = gate();
    const holder = lock.run('s', async () => busy.p);
    const seen: number[][] = [];
    const handle = async (reqs: number[]) => {
      seen.push(reqs);
      return reqs.map((r) => ({ ok: true as const, value: r * 10 }));
    };
    const answers = [1, 2, 3, 4, 5].map((r) => groups.submit('s', 'g', r, handle));
    busy.open();
    await holder;
    expect(await Promise.all(answers)).toEqual([10, 20, 30, 40, 50]);
    expect(seen).toEqual([[1, 2], [3, 4], [5]]);
  });

  it('requests that arrive in the same turn as the first, with the lock free, join its group', async () => {
    const groups = new CommitGroups<number, number>(new KeyedMutex());
    const seen: number[][] = [];
    const handle = async (reqs: number[]) => {
      seen.push(reqs);
      return reqs.map((r) => ({ ok: true as const, value: r }));
    };
    const answers = [groups.submit('s', 'g', 1, handle), groups.submit('s', 'g', 2, handle)];
    expect(await Promise.all(answers)).toEqual([1, 2]);
    expect(seen).toEqual([[1, 2]]);
  });

  it('fails every request of the group when the handler throws, and a later group starts afresh', async () => {
    const groups = new CommitGroups<number, number>(new KeyedMutex());
    let calls = 0;
    const handle = async (reqs: number[]) => {
      calls++;
      if (calls === 1) throw new Error('commit failed');
      return reqs.map((r) => ({ ok: true as const, value: r }));
    };
    const settled = await Promise.allSettled([groups.submit('s', 'g', 1, handle), groups.submit('s', 'g', 2, handle)]);
    expect(settled.map((s) => s.status === 'rejected' && (s.reason as Error).message)).toEqual(['commit failed', 'commit failed']);
    expect(await groups.submit('s', 'g', 3, handle)).toBe(3);
  });

  it('rejects a request the handler gave no outcome for', async () => {
    const groups = new CommitGroups<number, number>(new KeyedMutex());
    const handle = async () => [{ ok: true as const, value: 1 }];
    const settled = await Promise.allSettled([groups.submit('s', 'g', 1, handle), groups.submit('s', 'g', 2, handle)]);
    expect(settled[0]).toEqual({ status: 'fulfilled', value: 1 });
    expect(settled[1]!.status).toBe('rejected');
    expect(((settled[1] as PromiseRejectedResult).reason as Error).message).toMatch(/no outcome/);
  });

  it('groups of different keys do not mix', async () => {
    const lock = new KeyedMutex();
    const groups = new CommitGroups<string, string>(lock);
    const seen: string[][] = [];
    const handle = async (reqs: string[]) => {
      seen.push(reqs);
      return reqs.map((r) => ({ ok: true as const, value: r }));
    };
    await Promise.all([groups.submit('s1', 'g1', 'a', handle), groups.submit('s2', 'g2', 'b', handle), groups.submit('s1', 'g1', 'c', handle)]);
    expect(seen.sort((x, y) => x.length - y.length)).toEqual([['b'], ['a', 'c']]);
  });

  it('a full group that starts, or fails, leaves the newer group of its key open for later requests', async () => {
    // maxGroup 2: [1, 2] is full, so 3 opens the next group, which is still open (one member) when
    // [1, 2] starts; a request made while [1, 2] is handled joins it rather than opening a third.
    for (const fail of [false, true]) {
      const lock = new KeyedMutex();
      const groups = new CommitGroups<number, number>(lock, 2);
      const busy = gate();
      const holder = lock.run('s', async () => busy.p);
      const seen: number[][] = [];
      let late: Promise<number> | undefined;
      const handle = async (reqs: number[]) => {
        seen.push(reqs);
        if (reqs[0] === 1) {
          late = groups.submit('s', 'g', 4, handle);
          if (fail) throw new Error('commit failed');
        }
        return reqs.map((r) => ({ ok: true as const, value: r }));
      };
      const first = Promise.allSettled([1, 2].map((r) => groups.submit('s', 'g', r, handle)));
      const third = groups.submit('s', 'g', 3, handle);
      busy.open();
      await holder;
      expect((await first).map((s) => s.status)).toEqual(fail ? ['rejected', 'rejected'] : ['fulfilled', 'fulfilled']);
      expect(await third).toBe(3);
      expect(await late).toBe(4);
      expect(seen).toEqual([[1, 2], [3, 4]]);
    }
  });
});
