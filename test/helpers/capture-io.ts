import type { CliIo } from '../../src/cli/io.ts';

/** A CLI io that records what a command prints: stdout and stderr apart, and both in order. */
export interface CapturedIo extends CliIo {
  stdout: string[];
  stderr: string[];
  all: string[];
}

export function captureIo(env: NodeJS.ProcessEnv): CapturedIo {
  const stdout: string[] = [];
  const stderr: string[] = [];
  const all: string[] = [];
  return {
    out: (t) => {
      stdout.push(t);
      all.push(t);
    },
    err: (t) => {
      stderr.push(t);
      all.push(t);
    },
    isTty: false,
    env,
    cwd: process.cwd(),
    stdout,
    stderr,
    all,
  };
}
