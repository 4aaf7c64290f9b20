/**
 * glibc's malloc gives each thread that allocates under contention an arena of its own
 * (up to eight per core), and keeps what was freed in each. V8's compiler and
 * garbage-collector threads allocate that way: at the peak of the 1M-row import in `lean`
 * mode about 110 of its 200 MB were outside V8's heap and buffers. Two arenas
 * (MALLOC_ARENA_MAX=2) took the peak from 194-220 MB (median 208) to 182-193 (median
 * 182), with no more CPU; returning blocks of 128 KB or more to the system at once
 * (MALLOC_MMAP_THRESHOLD_, and MALLOC_TRIM_THRESHOLD_ for the top of the heap, both
 * 131072: glibc otherwise raises both as large blocks are freed, and keeps them) took
 * another 10 MB off (bench/README.md, "Import, session 7"). The Docker image sets all three.
 *
 * glibc reads them once, as the process starts. So a `lean` command that finds one unset
 * starts itself again with it set: `process.execve` replaces the process in place (same
 * pid, same standard streams, the same arguments and flags), before anything of the
 * command has started. A value the user set is left as it is.
 */

/** What `lean` asks of glibc's malloc (the Dockerfile sets the same). */
export const LEAN_MALLOC_ENV: Readonly<Record<string, string>> = {
  MALLOC_ARENA_MAX: '2',
  MALLOC_TRIM_THRESHOLD_: '131072',
  MALLOC_MMAP_THRESHOLD_: '131072',
};

export interface ArenaRestart {
  file: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

/**
 * What to start again with {@link LEAN_MALLOC_ENV} set, or undefined when there is
 * nothing to do: not Linux (another malloc), every variable already set (by the user, or
 * by this on the first start), a Node without `process.execve`, or a debugger asked for
 * (`--inspect…` on the command line or in NODE_OPTIONS: with `--inspect-brk` a restart
 * would stop the program at its first line twice).
 */
export function arenaRestart(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
  canExec: boolean = typeof process.execve === 'function',
  execArgv: readonly string[] = process.execArgv,
): ArenaRestart | undefined {
  const unset = Object.keys(LEAN_MALLOC_ENV).some((name) => env[name] === undefined);
  if (platform !== 'linux' || !unset || !canExec) return undefined;
  if ([...execArgv, env.NODE_OPTIONS ?? ''].some((arg) => /--inspect/.test(arg))) return undefined;
  return {
    file: process.execPath,
    args: [process.execPath, ...execArgv, ...process.argv.slice(1)],
    env: { ...LEAN_MALLOC_ENV, ...env },
  };
}

/**
 * Starts this process again with glibc's malloc set for `lean` when {@link arenaRestart}
 * says so; else, or if the restart fails (`process.execve` is experimental in Node 24 and throws
 * when the exec does), returns and the command runs with glibc's default arenas.
 */
export function limitMallocArenas(): void {
  const restart = arenaRestart();
  if (restart === undefined) return;
  try {
    process.execve!(restart.file, restart.args, restart.env);
  } catch {
    // More memory, the same results: not worth stopping the command for.
  }
}
