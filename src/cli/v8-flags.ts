/**
 * Whether the user set a V8 flag matching `pattern` on the command line or in
 * NODE_OPTIONS: the start-up holds (./young-generation.ts, ./optimizing-compilers.ts)
 * leave such a flag as the user set it.
 */
export function setByUser(pattern: RegExp): boolean {
  return [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((arg) => pattern.test(arg));
}
