/**
 * Group commit (src/storage/group-commit.ts), the one queue both databases use: which commits share
 * a group, what a group's outcomes do to each caller, and a `retry` sent again.
 */
import { describe, expect, it } from 'vitest';
import { GroupCommit, type QueuedCommit, type Settled } from '../../src/storage/group-commit.js';
import type { GenerationCommit } from '../../src/storage/index.js';

const commit = (generation: number): GenerationCommit => ({ expectedRevision: 1, generation, engineState: null, newTrials: [], now: 'x' });

/** A database whose group applications finish when the test says, recording each group as [study, generation]. */
function manual() {
  const groups: [string, number][][] = [];
  const finish: ((s: Settled[]) => void)[] = [];
  const apply = (g: readonly QueuedCommit[]) => {
    groups.push(g.map((q) => [q.studyId, q.commit.generation]));
    return new Promise<Settled[]>((resolve) => finish.push(resolve));
  };
  return { groups, finish, apply };
}
const done = (n: number): Settled[] => Array.from({ length: n }, (_, i) => ({ ok: true, result: { committed: true, revision: 1, trialIds: [i] } }));
const tick = () => new Promise((r) => setImmediate(r));

describe('group commit', () => {
  it('a lone commit goes out at once; those that arrive meanwhile go out together, one per study, in arrival order', async () => {
    const m = manual();
    const g = new GroupCommit(m.apply);
    const first = g.submit('a', commit(1));
    await tick();
    const rest = [g.submit('b', commit(2)), g.submit('a', commit(3)), g.submit('c', commit(4)), g.submit('a', commit(5))];
    await tick();
    expect(m.groups).toEqual([[['a', 1]]]);
    m.finish[0]!(done(1));
    await first;
    await tick();
    // a's second commit waits for the next group, so it is checked against the first's writes.
    expect(m.groups[1]).toEqual([['b', 2], ['a', 3], ['c', 4]]);
    m.finish[1]!(done(3));
    await tick();
    expect(m.groups[2]).toEqual([['a', 5]]);
    m.finish[2]!(done(1));
    expect(await Promise.all(rest)).toEqual([
      { committed: true, revision: 1, trialIds: [0] },
      { committed: true, revision: 1, trialIds: [1] },
      { committed: true, revision: 1, trialIds: [2] },
      { committed: true, revision: 1, trialIds: [0] },
    ]);
  });

  it('commits submitted in one task go out together; a group is bounded at maxGroup', async () => {
    const m = manual();
    const g = new GroupCommit(m.apply, 2);
    void g.submit('z', commit(0));
    void g.submit('y', commit(0));
    void g.submit('a', commit(1));
    await tick();
    expect(m.groups).toEqual([[['z', 0], ['y', 0]]]);
    m.finish[0]!(done(2));
    await tick();
    expect(m.groups[1]).toEqual([['a', 1]]);
    for (const s of ['b', 'c', 'd']) void g.submit(s, commit(2));
    m.finish[1]!(done(1));
    await tick();
    expect(m.groups.slice(2)).toEqual([[['b', 2], ['c', 2]]]);
  });

  it('each caller gets its own outcome; a retried commit goes in the next group first; a failed application fails its group only', async () => {
    const m = manual();
    const g = new GroupCommit(m.apply);
    const a = g.submit('a', commit(1));
    await tick();
    const b = g.submit('b', commit(2));
    const c = g.submit('c', commit(3));
    const d = g.submit('d', commit(4));
    m.finish[0]!(done(1));
    await tick();
    m.finish[1]!([{ retry: true }, { ok: false, error: new Error('c failed') }, { ok: true, result: { committed: false, reason: 'revision_conflict' } }]);
    await expect(c).rejects.toThrow('c failed');
    expect(await d).toEqual({ committed: false, reason: 'revision_conflict' });
    await tick();
    expect(m.groups[2]).toEqual([['b', 2]]);
    const e = g.submit('e', commit(5));
    m.finish[2]!(done(1));
    expect(await b).toEqual({ committed: true, revision: 1, trialIds: [0] });
    await a;
    const failing = new GroupCommit(() => Promise.reject(new Error('connection lost')));
    await expect(failing.submit('x', commit(1))).rejects.toThrow('connection lost');
    await tick();
    m.finish[3]!(done(1));
    expect(await e).toEqual({ committed: true, revision: 1, trialIds: [0] });
  });

  it('idle() resolves once every submitted commit is answered', async () => {
    const m = manual();
    const g = new GroupCommit(m.apply);
    await g.idle();
    const answered: string[] = [];
    void g.submit('a', commit(1)).then(() => answered.push('a'));
    await tick();
    void g.submit('b', commit(2)).then(() => answered.push('b'));
    const idle = g.idle().then(() => answered.push('idle'));
    m.finish[0]!(done(1));
    await tick();
    m.finish[1]!(done(1));
    await idle;
    expect(answered).toEqual(['a', 'b', 'idle']);
  });
});
