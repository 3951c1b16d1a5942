/** Typed errors of the suggest/observe loop; codes are part of the API contract (docs/API.md). */
import { DomainError } from '../common/errors.js';

/** trial_not_found for one or several ids (an observation batch lists every unknown one). */
export class UnknownTrialsError extends DomainError {
  constructor(studyId: string, trialIds: readonly number[]) {
    const which = trialIds.length === 1 ? `trial ${trialIds[0]}` : `trials ${trialIds.join(', ')}`;
    super('not_found', 'trial_not_found', `study ${JSON.stringify(studyId)} has no ${which}`);
  }
}

export class TrialAlreadyCompletedError extends DomainError {
  constructor(trialId: number, detail = 'with a different value') {
    super('conflict', 'trial_already_completed', `trial ${trialId} is already COMPLETED ${detail}`);
  }
}

/** The trial is not in a state that allows the request (e.g. a heartbeat for a FAILED trial). */
export class TrialNotActiveError extends DomainError {
  constructor(trialId: number, state: string, what: string) {
    super('conflict', 'trial_not_active', `trial ${trialId} is ${state}: ${what}`);
  }
}

/** The request names a client that does not hold the trial's lease. */
export class LeaseNotHeldError extends DomainError {
  constructor(trialId: number, clientId: string) {
    super('conflict', 'lease_not_held', `trial ${trialId} is leased to another client than ${JSON.stringify(clientId)}`);
  }
}

/** Writers kept racing on the same study (another replica); the client may retry. */
export class ConcurrentUpdateError extends DomainError {
  constructor(studyId: string) {
    super('unavailable', 'concurrent_update', `study ${JSON.stringify(studyId)} kept changing while this request was computed; retry`);
  }
}
