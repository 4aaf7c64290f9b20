import { RowbridgeError } from '../ground/errors.ts';

/** `run`: the job's run is worked by another process (a worker, or another `run`): exit 75. */
export class JobBusyError extends RowbridgeError {
  override name = 'JobBusyError';
  override readonly code = 'JOB_BUSY';
}
