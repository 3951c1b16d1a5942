/**
 * The front plot's staircase (src/ui/front.js, a browser module with no DOM use at import): built
 * from the losses, drawn in the objectives' units. Expected paths are worked by hand below.
 */
import { describe, expect, it } from 'vitest';
// @ts-expect-error a plain browser ES module without type declarations
import { projectedFront, staircase } from '../../src/ui/front.js';

type P = { x: number; y: number; lx: number; ly: number };
const path = staircase as (pts: P[]) => number[][];
const project = projectedFront as (pts: P[]) => P[];

describe('staircase', () => {
  it('two minimised objectives: sorted by the x loss, each step along x at the previous y, then down to the next point', () => {
    // Losses = values (1,4), (4,1), (2,2), given out of order: sorted (1,4), (2,2), (4,1); corners (2,4) and (4,2).
    const pts = [[1, 4], [4, 1], [2, 2]].map(([x, y]) => ({ x: x!, y: y!, lx: x!, ly: y! }));
    expect(path(pts)).toEqual([[1, 4], [2, 4], [2, 2], [4, 2], [4, 1]]);
  });

  it('a maximised y objective: the same corners in values, read from the losses, not the direction', () => {
    // y maximised (accuracy): values 1, 2, 4 have losses −1, −2, −4. With x (error) 1, 2, 4 minimised,
    // each point is better in one loss, so all three are on the front. Sorted by x loss: (1,1), (2,2),
    // (4,4); corners take the next x and the previous y: (2,1), (4,2). Read as if both were minimised,
    // (1,1) would dominate the others and the path would be that one point.
    const pts = [[1, 1], [2, 2], [4, 4]].map(([x, y]) => ({ x: x!, y: y!, lx: x!, ly: -y! }));
    expect(path(pts)).toEqual([[1, 1], [2, 1], [2, 2], [4, 2], [4, 4]]);
    // Both maximised: losses (−1,−4), (−2,−2), (−4,−1), mutually non-dominated. Sorted by x loss the
    // path starts at x = 4 (loss −4): (4,1), corner (2,1), (2,2), corner (1,2), (1,4).
    const px = [[1, 4], [2, 2], [4, 1]].map(([x, y]) => ({ x: x!, y: y!, lx: -x!, ly: -y! }));
    expect(path(px)).toEqual([[4, 1], [2, 1], [2, 2], [1, 2], [1, 4]]);
  });

  it('with a third objective, front points dominated in the two shown are left out of the staircase', () => {
    // (3,3) is on a 3-objective front (say it wins on the third) but (2,2) dominates it in these two.
    const pts = [[1, 4], [3, 3], [2, 2], [4, 1]].map(([x, y]) => ({ x: x!, y: y!, lx: x!, ly: y! }));
    expect(project(pts).map((p) => [p.x, p.y])).toEqual([[1, 4], [2, 2], [4, 1]]);
    expect(path(pts)).toEqual([[1, 4], [2, 4], [2, 2], [4, 2], [4, 1]]);
    expect(path([])).toEqual([]);
    expect(path([{ x: 5, y: 6, lx: 5, ly: 6 }])).toEqual([[5, 6]]);
  });
});
