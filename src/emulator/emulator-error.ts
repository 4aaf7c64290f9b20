/**
 * A business failure the emulator answers with the envelope (HTTP 200, `success: false`,
 * platform notes §1). Route handlers throw it; the server turns it into the answer.
 */
export class EmulatorError extends Error {
  override readonly name = 'EmulatorError';
  /** Platform error code of spec §7. */
  readonly errorCode: number;

  constructor(errorCode: number, message: string) {
    super(message);
    this.errorCode = errorCode;
  }
}

/** The envelope of every answer (spec §2). */
export interface EmulatorEnvelope {
  success: boolean;
  error_code: number;
  error_msg: string;
  data: unknown;
}

export function okEnvelope(data: unknown): EmulatorEnvelope {
  return { success: true, error_code: 1, error_msg: '', data };
}

export function errorEnvelope(errorCode: number, message: string): EmulatorEnvelope {
  return { success: false, error_code: errorCode, error_msg: message, data: null };
}

/** Shorthand for the parameter errors that make up most validation failures. */
export function paramError(message: string): EmulatorError {
  return new EmulatorError(10001, message);
}

export function valueError(message: string): EmulatorError {
  return new EmulatorError(10002, message);
}

export function notFound(message: string): EmulatorError {
  return new EmulatorError(10007, message);
}
