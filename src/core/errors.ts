/**
 * Every refusal of bad input is a MosaicError: a stable code for tests and scripts,
 * the field or path it is about, and a message a person can act on.
 */
export class MosaicError extends Error {
  readonly code: string;
  readonly field: string;
  constructor(code: string, field: string, message: string) {
    super(`${field}: ${message}`);
    this.name = "MosaicError";
    this.code = code;
    this.field = field;
  }
}

export function isMosaicError(e: unknown): e is MosaicError {
  return e instanceof MosaicError;
}
