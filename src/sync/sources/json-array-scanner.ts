/**
 * A small incremental JSON scanner that finds one array in a document (the root, or the
 * value at a path of object keys) and hands out the raw text of its elements one at a
 * time. Memory holds one element, the current key and the nesting stack, never the
 * document: values off the path are skipped without being kept. Elements are checked by
 * JSON.parse in the caller; the scanner only checks the structure it walks through.
 */
import { containerProblem, missingArrayProblem, scalarProblem } from './json-path-problems.ts';
import { JsonScanError } from './json-scan-error.ts';

/** Raw text of one array element and the line it starts on. */
export interface ScannedElement {
  text: string;
  line: number;
}

type FrameState = 'keyOrEnd' | 'key' | 'colon' | 'value' | 'valueOrEnd' | 'commaOrEnd';

interface Frame {
  kind: 'object' | 'array';
  /** Every key from the root to this container follows the path. */
  onPath: boolean;
  state: FrameState;
  key: string | undefined;
}

export interface JsonArrayScanner {
  /** Feeds the next chunk; returns the elements completed in it. */
  push(chunk: string): ScannedElement[];
  /** Checks the document did not stop half-way and that the array was found. */
  end(): void;
  /** True once the target array has closed: the rest of the file need not be read. */
  readonly done: boolean;
  /**
   * With `keepOutside`: the document's text with the target array emptied (`{"items":[],
   * "next":"c2"}`), for values beside the array such as a next-page cursor.
   */
  outside(): string;
}

/** Options of the scanner. */
export interface JsonArrayScannerOptions {
  /**
   * Keep the text outside the target array and scan past its end (see `outside()`).
   * @defaultValue `false`
   */
  keepOutside?: boolean;
}

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);
const LITERAL_CHAR = /[0-9a-zA-Z+\-.]/;

/** Creates a scanner for the array at `path` (object keys from the root; [] = the root). */
export function createJsonArrayScanner(
  path: readonly string[],
  options: JsonArrayScannerOptions = {},
): JsonArrayScanner {
  const keepOutside = options.keepOutside === true;
  let outsideText = '';
  const stack: Frame[] = [];
  let rootDone = false;
  let targetSeen = false;
  let done = false;
  let line = 1;
  // Scalar or key outside a captured element.
  let inString = false;
  let escape = false;
  let isKey = false;
  let collectKey = false;
  let keyRaw = '';
  let inLiteral = false;
  // Capture of one element of the target array.
  let capturing = false;
  let capDepth = 0;
  let capInString = false;
  let capEscape = false;
  let capBuf = '';
  let capStart = 0;
  let capLine = 0;

  const fail = (message: string): never => {
    throw new JsonScanError(line, message);
  };
  const top = (): Frame | undefined => stack[stack.length - 1];
  const isTarget = (frame: Frame | undefined): boolean =>
    frame !== undefined &&
    frame.kind === 'array' &&
    frame.onPath &&
    stack.length === path.length + 1 &&
    frame === top();

  const valueDone = (): void => {
    const frame = top();
    if (frame === undefined) rootDone = true;
    else frame.state = 'commaOrEnd';
  };

  /** Where a new value at the current depth sits relative to the path. */
  const placement = (): 'off' | 'along' | 'target' => {
    const depth = stack.length;
    const parent = top();
    if (parent === undefined) return path.length === 0 ? 'target' : 'along';
    if (!parent.onPath || parent.kind !== 'object' || parent.key !== path[depth - 1]) return 'off';
    return depth === path.length ? 'target' : 'along';
  };

  const startValue = (c: string): void => {
    if (isTarget(top())) {
      capturing = true;
      capDepth = c === '{' || c === '[' ? 1 : 0;
      capInString = c === '"';
      capEscape = false;
      capBuf = '';
      capLine = line;
      if (c !== '{' && c !== '[' && c !== '"' && !LITERAL_CHAR.test(c)) fail(`unexpected "${c}"`);
      return;
    }
    const place = placement();
    if (c === '{' || c === '[') {
      const problem = containerProblem(place, c, path, stack.length);
      if (problem !== undefined) fail(problem);
      if (place === 'target') targetSeen = true;
      stack.push({
        kind: c === '{' ? 'object' : 'array',
        onPath: place !== 'off',
        state: c === '{' ? 'keyOrEnd' : 'valueOrEnd',
        key: undefined,
      });
      return;
    }
    if (place !== 'off') fail(scalarProblem(place, c, path));
    if (c === '"') {
      inString = true;
      isKey = false;
    } else if (LITERAL_CHAR.test(c)) inLiteral = true;
    else fail(`unexpected "${c}"`);
  };

  const closeFrame = (c: string): void => {
    const frame = top();
    const matches =
      frame !== undefined &&
      ((c === '}' && frame.kind === 'object') || (c === ']' && frame.kind === 'array'));
    if (!matches) fail(`unexpected "${c}"`);
    if (frame === undefined) return;
    if (isTarget(frame)) done = true;
    stack.pop();
    valueDone();
  };

  const finishCapture = (chunk: string, endExclusive: number, out: ScannedElement[]): void => {
    out.push({ text: capBuf + chunk.slice(capStart, endExclusive), line: capLine });
    capturing = false;
    capBuf = '';
    valueDone();
  };

  /** Handles `c` in capture mode; returns true when it was consumed there. */
  const captureChar = (c: string, chunk: string, i: number, out: ScannedElement[]): boolean => {
    if (capInString) {
      if (capEscape) capEscape = false;
      else if (c === '\\') capEscape = true;
      else if (c === '"') {
        capInString = false;
        if (capDepth === 0) finishCapture(chunk, i + 1, out);
      }
      return true;
    }
    if (c === '"') capInString = true;
    else if (c === '{' || c === '[') capDepth++;
    else if (c === '}' || c === ']') {
      if (capDepth === 0) {
        finishCapture(chunk, i, out);
        return false;
      }
      capDepth--;
      if (capDepth === 0) finishCapture(chunk, i + 1, out);
    } else if (capDepth === 0 && (c === ',' || WHITESPACE.has(c))) {
      finishCapture(chunk, i, out);
      return false;
    }
    return true;
  };

  const structuralChar = (c: string): void => {
    if (inString) {
      if (collectKey) keyRaw += c;
      if (escape) escape = false;
      else if (c === '\\') escape = true;
      else if (c === '"') {
        inString = false;
        if (!isKey) valueDone();
        else if (collectKey) {
          const frame = top();
          if (frame !== undefined) frame.key = JSON.parse(`"${keyRaw.slice(0, -1)}"`) as string;
        }
      }
      return;
    }
    if (inLiteral) {
      if (LITERAL_CHAR.test(c)) return;
      inLiteral = false;
      valueDone();
    }
    if (WHITESPACE.has(c)) return;
    const frame = top();
    if (frame === undefined) {
      if (rootDone) fail(`unexpected "${c}" after the end of the document`);
      startValue(c);
      return;
    }
    switch (frame.state) {
      case 'valueOrEnd':
        if (c === ']') closeFrame(c);
        else startValue(c);
        return;
      case 'value':
        startValue(c);
        return;
      case 'keyOrEnd':
      case 'key':
        if (c === '}' && frame.state === 'keyOrEnd') closeFrame(c);
        else if (c === '"') {
          inString = true;
          escape = false;
          isKey = true;
          // Keys matter only where the path may continue; elsewhere they are skipped.
          collectKey = frame.onPath;
          keyRaw = '';
          frame.key = undefined;
          frame.state = 'colon';
        } else fail(`expected a key in double quotes, found "${c}"`);
        return;
      case 'colon':
        if (c !== ':') fail(`expected ":" after a key, found "${c}"`);
        frame.state = 'value';
        return;
      case 'commaOrEnd':
        if (c === ',') frame.state = frame.kind === 'object' ? 'key' : 'value';
        else closeFrame(c);
        return;
    }
  };

  return {
    get done() {
      return done;
    },
    outside() {
      return outsideText;
    },
    push(chunk) {
      const out: ScannedElement[] = [];
      capStart = 0;
      for (let i = 0; i < chunk.length && (keepOutside || !done); i++) {
        const c = chunk.charAt(i);
        if (capturing) {
          if (captureChar(c, chunk, i, out)) {
            if (c === '\n') line++;
            continue;
          }
        }
        const wasCapturing = capturing;
        // Inside the target array only its closing bracket is kept: elements, commas and
        // the whitespace between them go, so the kept text stays valid JSON.
        const inTarget = keepOutside && isTarget(top());
        structuralChar(c);
        if (!wasCapturing && capturing) capStart = i;
        else if (keepOutside && !capturing && (!inTarget || c === ']')) outsideText += c;
        if (c === '\n') line++;
      }
      if (capturing) {
        capBuf += chunk.slice(capStart);
        capStart = 0;
      }
      return out;
    },
    end() {
      if (done && !keepOutside) return;
      if (inLiteral && stack.length === 0) {
        inLiteral = false;
        rootDone = true;
      }
      if (capturing || inString || stack.length > 0) fail('the file ends before the JSON document does');
      if (!rootDone) fail('the file holds no JSON document');
      if (!targetSeen) fail(missingArrayProblem(path));
    },
  };
}
