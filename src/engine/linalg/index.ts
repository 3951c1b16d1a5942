export * from './matrix.js';
export * from './cholesky.js';
export * from './eigen.js';
