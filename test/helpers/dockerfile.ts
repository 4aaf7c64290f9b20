/**
 * A small Dockerfile reader for tests that check the image's structure (stages, user,
 * healthcheck, command) rather than its text. It knows what our Dockerfile uses:
 * comments, `\` continuations, `--flag=value` options and the JSON (exec) form; it is
 * not a full BuildKit parser (no heredocs, no escape directive).
 */

/** One instruction: `HEALTHCHECK --interval=30s CMD ["node", "-e", "..."]`. */
export interface Instruction {
  /** Upper-cased keyword: FROM, RUN, COPY, USER, HEALTHCHECK, CMD... */
  keyword: string;
  /** `--name=value` options before the arguments (`--from=deps`, `--interval=30s`). */
  flags: Record<string, string>;
  /** The rest, as written (continuations joined with a space). */
  args: string;
  /** The arguments of the JSON form (`["node", "src/cli.ts"]`), when they are one; for HEALTHCHECK, its CMD's. */
  exec?: string[] | undefined;
  /** 1-based line where the instruction starts. */
  line: number;
}

/** A build stage: its FROM and the instructions up to the next FROM. */
export interface Stage {
  image: string;
  name?: string;
  instructions: Instruction[];
}

function parseInstruction(text: string, line: number): Instruction {
  const match = /^(\S+)\s*(.*)$/s.exec(text);
  const keyword = (match?.[1] ?? '').toUpperCase();
  let rest = match?.[2] ?? '';
  const flags: Record<string, string> = {};
  for (let flag = /^--([\w-]+)=(\S+)\s*/.exec(rest); flag; flag = /^--([\w-]+)=(\S+)\s*/.exec(rest)) {
    flags[flag[1]!] = flag[2]!;
    rest = rest.slice(flag[0].length);
  }
  const command = keyword === 'HEALTHCHECK' ? rest.replace(/^CMD\s+/, '') : rest;
  return { keyword, flags, args: rest, exec: execForm(command), line };
}

function execForm(args: string): string[] | undefined {
  if (!args.startsWith('[')) return undefined;
  try {
    const parsed: unknown = JSON.parse(args);
    return Array.isArray(parsed) && parsed.every((a) => typeof a === 'string') ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** The instructions of a Dockerfile, in order. */
export function parseDockerfile(text: string): Instruction[] {
  const instructions: Instruction[] = [];
  let pending = '';
  let start = 0;
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    // A comment line inside a continuation is dropped too, as Docker does.
    if (line.startsWith('#') || (line === '' && pending === '')) return;
    if (pending === '') start = index + 1;
    const continued = line.endsWith('\\');
    pending += (pending === '' ? '' : ' ') + (continued ? line.slice(0, -1).trim() : line);
    if (!continued) {
      instructions.push(parseInstruction(pending, start));
      pending = '';
    }
  });
  if (pending !== '') instructions.push(parseInstruction(pending, start));
  return instructions;
}

/** The build stages of a Dockerfile; the last one is the image. */
export function dockerStages(text: string): Stage[] {
  const stages: Stage[] = [];
  for (const instruction of parseDockerfile(text)) {
    if (instruction.keyword === 'FROM') {
      const [image = '', as, name] = instruction.args.split(/\s+/);
      stages.push({ image, ...(as?.toUpperCase() === 'AS' && name ? { name } : {}), instructions: [] });
    } else stages.at(-1)?.instructions.push(instruction);
  }
  return stages;
}
