import { createInterface } from 'node:readline';

/**
 * The child side of {@link spawnJsonChild}: prints `ready` as the first stdout line,
 * answers each stdin line with `handle(command)` as one JSON line (or `{error}`), and
 * runs `shutdown` once stdin closes, which also happens when the parent dies, so a
 * crashed benchmark leaves no server behind.
 */
export async function serveJsonCommands(
  ready: unknown,
  handle: (command: unknown) => unknown,
  shutdown: () => Promise<void>,
): Promise<void> {
  process.stdout.write(`${JSON.stringify(ready)}\n`);
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    if (line.trim() === '') continue;
    let answer: unknown;
    try {
      answer = await handle(JSON.parse(line));
    } catch (err) {
      answer = { error: err instanceof Error ? err.message : String(err) };
    }
    process.stdout.write(`${JSON.stringify(answer)}\n`);
  }
  await shutdown();
}
