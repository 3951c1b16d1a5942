/**
 * Export and import of whole studies (study-document.ts). An import creates a new study, with a
 * new id and owned by the importing tenant, and writes it in one storage transaction, so a
 * rejected or failed import leaves nothing behind.
 */
import { randomUUID } from 'node:crypto';
import { resolveOptions } from '../../engine/index.js';
import type { JsonObject, Storage } from '../../storage/index.js';
import { StudyNotFoundError } from '../errors.js';
import { readStudy } from '../codec.js';
import type { Study } from '../studies/studies.js';
import { asJson, toDocument, type StudyDocument } from './study-document.js';
import { InlineEngineRunner, type EngineRunner } from '../pool/engine-pool.js';
import { checkDocument } from './study-import.js';

export interface StudyTransferDeps {
  storage: Storage;
  /** Runs the import's dry-run ask and estimate (the server's worker pool); inline when not given. */
  engine?: EngineRunner;
  now?: () => Date;
  newId?: () => string;
}

export class StudyTransfer {
  private readonly storage: Storage;
  private readonly engine: EngineRunner;
  private readonly now: () => Date;
  private readonly newId: () => string;

  constructor(deps: StudyTransferDeps) {
    this.storage = deps.storage;
    this.engine = deps.engine ?? new InlineEngineRunner();
    this.now = deps.now ?? (() => new Date());
    this.newId = deps.newId ?? (() => randomUUID());
  }

  async export(tenantId: string, studyId: string): Promise<StudyDocument> {
    const dump = await this.storage.exportStudy(tenantId, studyId);
    if (!dump) throw new StudyNotFoundError(studyId);
    return toDocument(readStudy(dump.study), dump.trials, dump.engineStates, this.now().toISOString());
  }

  /** A structurally valid document (the HTTP schema) → the new study; ValidationError if inconsistent. */
  async import(tenantId: string, doc: StudyDocument): Promise<Study> {
    await checkDocument(doc, this.engine);
    const s = doc.study;
    const now = this.now().toISOString();
    const record = await this.storage.importStudy(
      {
        id: this.newId(),
        tenantId,
        name: s.name,
        direction: s.direction,
        parameters: asJson(s.parameters),
        prior: asJson(s.prior),
        method: s.method,
        batchSize: s.batch_size,
        // Exported options are already effective; resolving again only fills what a hand-written
        // document left out, with the same defaults the original got.
        options: resolveOptions(s.method, s.parameters.length, s.options),
        seed: s.seed,
        maxTrials: s.max_trials,
        leaseSeconds: s.lease_seconds,
        knownOptimum: s.known_optimum,
        metadata: s.metadata as JsonObject,
        state: s.state,
        reason: s.reason,
        generation: s.generation,
        createdAt: now,
        updatedAt: now,
      },
      doc.trials.map((t) => ({
        trialId: t.trial_id,
        state: t.state,
        generation: t.generation,
        clientId: t.client_id,
        leaseExpiresAt: t.lease_expires_at,
        parameters: t.parameters,
        point: t.point,
        value: t.value,
        stderr: t.stderr,
        failureReason: t.failure_reason,
        source: t.source,
        createdAt: t.created_at,
        completedAt: t.completed_at,
        updatedAt: t.updated_at,
      })),
      doc.engine_states.map((e) => ({ generation: e.generation, revision: e.revision, version: e.version, state: asJson(e.state), createdAt: e.created_at })),
    );
    return readStudy(record);
  }
}
