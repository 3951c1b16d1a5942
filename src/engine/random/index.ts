export { Rng, sampleMvn, type RngState } from './rng.js';
export { chiSquareQuantile } from './chisquare.js';
