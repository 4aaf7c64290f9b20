import type { ProcessTuning } from './process-tuning.ts';
import path from 'node:path';

/** Exit codes of the CLI: a public contract. */
export const EXIT = {
  ok: 0,
  failure: 1,
  /** `run` finished, but some rows were dead-lettered. */
  deadLettered: 2,
  /** `run` finished, but the job's `expect:` did not hold (docs/expectations.md). */
  expectationNotMet: 3,
  usage: 64,
  /** `run`: another process (a worker, another `run`) is working the job: nothing was done. */
  busy: 75,
  /** Stopped by Ctrl-C (or SIGTERM) after handing back what it held: the run stays resumable. */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** What a command may print to; injected so tests can capture it. */
export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  /** stdout is a terminal: human output (a progress bar, tables). */
  isTty: boolean;
  /** stderr is a terminal: log lines are drawn readable (one line each) instead of JSON. @defaultValue false */
  errIsTty?: boolean;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** The command as the user typed it, for hints: `rowbridge` or `node src/cli.ts`. @defaultValue `rowbridge` */
  command?: string;
}

export interface CliCommand {
  /** `tuning` is the process's V8 tuning, for a command that holds it past its start (the worker). */
  main(args: string[], io: CliIo, tuning?: ProcessTuning): Promise<number>;
}

/**
 * How the user started the CLI, said back in hints: `rowbridge` through the installed
 * bin (or npx), else `node <the entry file as typed relative to cwd>`.
 */
export function commandAsTyped(argv1: string | undefined, cwd: string): string {
  if (argv1 === undefined || /(^|[/\\])(rowbridge(\.js)?)$/.test(argv1)) return 'rowbridge';
  const rel = path.relative(cwd, argv1);
  return `node ${rel.startsWith('..') || path.isAbsolute(rel) ? argv1 : rel}`;
}

/** The command name of {@link CliIo.command}, `rowbridge` when unset. */
export function cmd(io: Pick<CliIo, 'command'>): string {
  return io.command ?? 'rowbridge';
}

export function createCliIo(): CliIo {
  return {
    out: (text) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
    err: (text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
    isTty: process.stdout.isTTY === true,
    errIsTty: process.stderr.isTTY === true,
    env: process.env,
    cwd: process.cwd(),
    command: commandAsTyped(process.argv[1], process.cwd()),
  };
}
