export * from './matrix.js';
export * from './cholesky.js';
export * from './cholesky-inverse.js';
export * from './triangular.js';
export * from './gram.js';
export * from './eigen.js';
export * from './householder.js';
