/**
 * Typed domain errors. Each has a stable `code` (part of the API contract) and a `kind` that the
 * HTTP error handler, and only it, turns into a status code.
 */

/** One problem with the input, located by a JSON pointer such as `/parameters/2/prior/std`. */
export interface FieldError {
  path: string;
  message: string;
}

/** `busy`: the server has more queued work for this caller than it takes now; retry after `retryAfterSeconds`. */
export type ErrorKind = 'invalid' | 'not_found' | 'conflict' | 'unavailable' | 'busy';

export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    readonly code: string,
    message: string,
    /** When a retry may succeed (sent as Retry-After). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class ValidationError extends DomainError {
  constructor(readonly errors: FieldError[]) {
    super('invalid', 'validation_failed', `the request is invalid: ${errors.map((e) => `${e.path || '/'}: ${e.message}`).join('; ')}`);
  }
}

export class StudyNotFoundError extends DomainError {
  constructor(studyId: string) {
    super('not_found', 'study_not_found', `no study with id ${JSON.stringify(studyId)}`);
  }
}

export class TrialNotFoundError extends DomainError {
  constructor(studyId: string, trialId: number) {
    super('not_found', 'trial_not_found', `study ${JSON.stringify(studyId)} has no trial ${trialId}`);
  }
}

export class InvalidPageTokenError extends DomainError {
  constructor() {
    super('invalid', 'invalid_page_token', 'page_token is not a token this server issued for this listing');
  }
}

export class InvalidStateTransitionError extends DomainError {
  constructor(from: string, to: string) {
    super('conflict', 'invalid_state_transition', `a ${from} study cannot become ${to}`);
  }
}

/** JSON pointer (RFC 6901) from path segments. */
export function pointer(segments: readonly (string | number)[]): string {
  return segments.map((s) => '/' + String(s).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
}
