/**
 * The study document of `GET /export` and `POST /import`: the domain's schema
 * (src/domain/transfer/document-schema.ts), with its example, as the OpenAPI component StudyDocument.
 */
import { DOCUMENT_FORMAT, DOCUMENT_VERSION, DocumentSchema } from '../../domain/index.js';

const example = {
  format: DOCUMENT_FORMAT,
  version: DOCUMENT_VERSION,
  exported_at: '2025-01-02T08:00:00.000Z',
  study: {
    id: '0f8fad5b-d9cb-469f-a165-70867728950e',
    name: 'resnet-lr',
    direction: 'minimize',
    parameters: [{ name: 'log_lr', type: 'float', scale: 'linear', bounds: [-8, 0], prior: { mean: -3, std: 1 } }],
    prior: { mean: [-3], covariance: [[1]], std: [1] },
    method: 'random',
    batch_size: 1,
    options: {},
    seed: 7,
    max_trials: null,
    lease_seconds: 600,
    known_optimum: null,
    metadata: {},
    state: 'ACTIVE',
    reason: null,
    generation: 1,
    created_at: '2025-01-01T12:00:00.000Z',
    updated_at: '2025-01-01T12:05:00.000Z',
  },
  trials: [
    {
      trial_id: 1,
      state: 'COMPLETED',
      generation: 0,
      client_id: 'worker-1',
      lease_expires_at: null,
      parameters: { log_lr: -2.5 },
      point: [0.5],
      value: 0.73,
      stderr: null,
      failure_reason: null,
      late: false,
      source: 'suggested',
      created_at: '2025-01-01T12:00:01.000Z',
      completed_at: '2025-01-01T12:04:00.000Z',
      updated_at: '2025-01-01T12:04:00.000Z',
    },
  ],
  engine_states: [{ generation: 1, revision: 3, version: 1, state: { method: 'random', dim: 1, mean: [0], cov: [[1]], '…': '…' }, created_at: '2025-01-01T12:04:00.000Z' }],
};

export const StudyDocumentSchema = DocumentSchema.meta({ id: 'StudyDocument', examples: [example] });
