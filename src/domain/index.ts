export * from './errors.js';
export * from './study-spec.js';
export { StudyService, MAX_SEED, type Study, type StudyPatchInput, type StudyServiceDeps } from './studies.js';
