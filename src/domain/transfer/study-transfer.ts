/**
 * Export and import of whole studies (study-document.ts). An import creates a new study, with a
 * new id and owned by the importing tenant, and writes it in one storage transaction, so a
 * rejected or failed import leaves nothing behind.
 */
import { importedEvaluations } from '../results/index.js';
import { randomUUID } from 'node:crypto';
import type { ReportsStore } from '../../storage/index.js';
import { StudyNotFoundError } from '../common/errors.js';
import { readStudy } from '../studies/codec.js';
import type { Study } from '../studies/studies.js';
import { fromDocument, toDocument, type StudyDocument } from './study-document.js';
import { InlineEngineRunner, type EngineRunner } from '../pool/engine-pool.js';
import { checkDocument } from './study-import.js';
import { checkStudyCost } from '../studies/study-cost.js';

export interface StudyTransferDeps {
  storage: ReportsStore;
  /** Runs the import's dry-run ask and estimate (the server's worker pool); inline when not given. */
  engine?: EngineRunner;
  now?: () => Date;
  newId?: () => string;
  /** STUDY_COST_MAX: an imported study may cost no more than a created one (study-cost.ts). */
  maxStudyCost?: number;
}

export class StudyTransfer {
  private readonly storage: ReportsStore;
  private readonly engine: EngineRunner;
  private readonly now: () => Date;
  private readonly newId: () => string;
  private readonly maxStudyCost: number;

  constructor(deps: StudyTransferDeps) {
    this.storage = deps.storage;
    this.engine = deps.engine ?? new InlineEngineRunner();
    this.now = deps.now ?? (() => new Date());
    this.newId = deps.newId ?? (() => randomUUID());
    this.maxStudyCost = deps.maxStudyCost ?? Infinity;
  }

  async export(tenantId: string, studyId: string): Promise<StudyDocument> {
    const dump = await this.storage.exportStudy(tenantId, studyId);
    if (!dump) throw new StudyNotFoundError(studyId);
    return toDocument(readStudy(dump.study), dump.trials, dump.engineStates, this.now().toISOString(), dump.intermediate);
  }

  /** A structurally valid document (document-schema.ts) → the new study; ValidationError if inconsistent. */
  async import(tenantId: string, doc: StudyDocument): Promise<Study> {
    // Before the document's dry run, which is engine work of that cost.
    const s = doc.study;
    checkStudyCost(s.method, s.parameters.length, s.batch_size, s.options, s.max_trials, this.maxStudyCost);
    await checkDocument(doc, this.engine);
    const copy = fromDocument(doc, { id: this.newId(), tenantId, now: this.now().toISOString() });
    const record = await this.storage.importStudy(copy.study, copy.trials, copy.engineStates, copy.intermediate, importedEvaluations(copy.study, copy.trials));
    return readStudy(record);
  }
}
