import { randomBytes } from 'node:crypto';

/** A run's id: the job, the UTC start to the second, and 6 random hex digits. */
export function newRunId(job: string): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '');
  return `${job}-${stamp}-${randomBytes(3).toString('hex')}`;
}
