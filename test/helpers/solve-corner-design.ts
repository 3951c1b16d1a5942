/**
 * Child process of test/engine/jacobi-svd.test.ts: solves the rank-deficient design of
 * test/fixtures/linalg/f23-d10-corner-design.json.gz (on which ml-matrix's SVD never returns) and
 * prints the solution as JSON. Run apart so that a solver that loops forever fails the test by its
 * timeout instead of hanging the test worker.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { minNormLeastSquares } from '../../src/engine/linalg/jacobi-svd.js';

const path = new URL('../fixtures/linalg/f23-d10-corner-design.json.gz', import.meta.url);
const { rows, rhs } = JSON.parse(gunzipSync(readFileSync(path)).toString('utf8')) as { rows: number[][]; rhs: number[][] };
process.stdout.write(JSON.stringify({ x: minNormLeastSquares(rows, rhs.map((r) => r[0])) }));
