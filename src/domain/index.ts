export * from './errors.js';
export * from './study-spec.js';
export { StudyService, MAX_SEED, type Study, type StudyPatchInput, type StudyServiceDeps } from './studies.js';
export { ReportsService, regretHistory, type ReportsServiceDeps, type BestReport, type DistributionReport, type Evaluation, type GenerationReport } from './reports.js';
export { StudyTransfer, type StudyTransferDeps } from './study-transfer.js';
export { DOCUMENT_FORMAT, DOCUMENT_VERSION, type StudyDocument, type DocumentStudy, type DocumentTrial, type DocumentEngineState } from './study-document.js';
