/**
 * Typed engine errors. Each has a stable `code`; the HTTP layer maps codes to responses, and
 * nothing in the engine ever lets a NaN or Infinity reach a state instead of throwing one of these.
 */
export class EngineError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'EngineError';
  }
}

/** A matrix that had to be positive definite was not, even after the allowed jitter. */
export class NotPositiveDefinite extends EngineError {
  constructor(message = 'matrix is not positive definite') {
    super('not_positive_definite', message);
    this.name = 'NotPositiveDefinite';
  }
}

/** A computation produced a non-finite number (overflow in exp/expm, a degenerate input, …). */
export class NonFiniteError extends EngineError {
  constructor(message: string) {
    super('non_finite', message);
    this.name = 'NonFiniteError';
  }
}

/** Invalid input to the engine (wrong dimension, bad option value, …). */
export class InvalidInputError extends EngineError {
  constructor(message: string) {
    super('invalid_engine_input', message);
    this.name = 'InvalidInputError';
  }
}
