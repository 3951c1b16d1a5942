/** The meaning of a result (objective.ts) and the evaluations derived from it (evaluations.ts). */
export * from './objective.js';
export * from './evaluations.js';
export * from './reported.js';
export * from './stopped.js';
