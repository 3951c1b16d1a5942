/** The meaning of a result (objective.ts, outcomes.ts for several objectives and constraints) and what is derived from it (evaluations.ts, front.ts). */
export * from './objective.js';
export * from './evaluations.js';
export * from './reported.js';
export * from './stopped.js';
export * from './outcomes.js';
export * from './front.js';
