/** Exit codes of the CLI: a public contract. */
export const EXIT = {
  ok: 0,
  failure: 1,
  /** `run` finished, but some rows were dead-lettered. */
  deadLettered: 2,
  usage: 64,
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
}

export interface CliCommand {
  main(args: string[], io: CliIo): Promise<number>;
}

export function createCliIo(): CliIo {
  return {
    out: (text) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`),
    err: (text) => process.stderr.write(text.endsWith('\n') ? text : `${text}\n`),
    isTty: process.stdout.isTTY === true,
    errIsTty: process.stderr.isTTY === true,
    env: process.env,
    cwd: process.cwd(),
  };
}
