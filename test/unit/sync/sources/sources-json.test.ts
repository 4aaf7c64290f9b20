import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { createSource } from '../../../../src/sync/sources/create-source.ts';
import { createJsonArrayScanner } from '../../../../src/sync/sources/json-array-scanner.ts';
import { collect, createTempDir, rejection } from '../../../fixtures/sources/source-test-kit.ts';

let tmp: Awaited<ReturnType<typeof createTempDir>>;
beforeAll(async () => {
  tmp = await createTempDir('json');
});
afterAll(async () => {
  await tmp.remove();
});

const read = (path: string, itemsPath?: string) =>
  collect(
    createSource(
      { type: 'json', path, ...(itemsPath === undefined ? {} : { itemsPath }) },
      { env: {}, baseDir: tmp.dir },
    ),
  );

/** Feeds a document in chunks of `size` characters and returns the elements' text. */
function scan(doc: string, path: string[], size: number): string[] {
  const scanner = createJsonArrayScanner(path);
  const out: string[] = [];
  for (let i = 0; i < doc.length && !scanner.done; i += size)
    out.push(...scanner.push(doc.slice(i, i + size)).map((e) => e.text));
  scanner.end();
  return out;
}

describe('json source', () => {
  it('reads a root array with element line numbers', async () => {
    await tmp.write(
      'root.json',
      '\uFEFF[\n  {"id": 1, "s": "a ] } , \\" ["},\n  {"id": 2, "nested": {"list": [1, {"x": "}"}]}}\n]\n',
    );
    const items = await read('root.json');
    expect(items.map((i) => [i.data, i.position])).toEqual([
      [
        { id: 1, s: 'a ] } , " [' },
        { index: 0, line: 2 },
      ],
      [
        { id: 2, nested: { list: [1, { x: '}' }] } },
        { index: 1, line: 3 },
      ],
    ]);
  });

  it('follows itemsPath past sibling values that hold look-alike keys', async () => {
    const doc = {
      meta: { items: [{ wrong: 1 }] },
      data: { other: [{ items: [{ wrong: 2 }] }], items: [{ id: 'a' }, { id: 'b' }], after: 1 },
    };
    // The wanted key is written with an escape, as some encoders do.
    const text = JSON.stringify(doc).replace('"items":[{"id"', '"it\\u0065ms":[{"id"');
    expect(text).toContain('"it\\u0065ms"');
    await tmp.write('nested.json', text);
    expect((await read('nested.json', 'data.items')).map((i) => i.data)).toEqual([{ id: 'a' }, { id: 'b' }]);
  });

  it('gives the same elements whatever the chunk boundaries', () => {
    const doc = '{"a":"x\\"y","data":{"items":[{"k":"\\u00e9\\\\"}, 12, "s", null, [1,[2]], {"e":{}}]}}';
    const expected = ['{"k":"\\u00e9\\\\"}', '12', '"s"', 'null', '[1,[2]]', '{"e":{}}'];
    for (const size of [1, 2, 3, 7, 1000]) expect(scan(doc, ['data', 'items'], size)).toEqual(expected);
  });

  it('keeps the text beside the array, whatever the chunk boundaries, for a cursor after it', () => {
    const doc = '{"page":{"next":"c\\"2"},"items":[ {"id":1}, 2 ,"x]",[3] ],"tail":[1,{"k":null}]}';
    for (const size of [1, 2, 5, 1000]) {
      const scanner = createJsonArrayScanner(['items'], { keepOutside: true });
      const elements: string[] = [];
      for (let i = 0; i < doc.length; i += size)
        elements.push(...scanner.push(doc.slice(i, i + size)).map((e) => e.text));
      scanner.end();
      expect(elements).toEqual(['{"id":1}', '2', '"x]"', '[3]']);
      expect(JSON.parse(scanner.outside())).toEqual({
        page: { next: 'c"2' },
        items: [],
        tail: [1, { k: null }],
      });
    }
  });

  it('yields elements that are not objects as invalid records and reads on', async () => {
    await tmp.write('mixed.json', '[{"id":1},\n5,\n{"id":3}]');
    const items = await read('mixed.json');
    expect(items.map((i) => i.data)).toEqual([{ id: 1 }, {}, { id: 3 }]);
    expect(items[1]?.error?.message).toBe(
      `${join(tmp.dir, 'mixed.json')} line 2: array element 2: expected a JSON object, found a number`,
    );
  });

  it('explains a document of the wrong shape, naming file and line', async () => {
    await tmp.write('obj.json', '{"data": {"items": {"id": 1}}}');
    const notArray = await rejection(read('obj.json'));
    expect(notArray.code).toBe('SOURCE_FORMAT');
    expect(notArray.message).toBe(
      `${join(tmp.dir, 'obj.json')} line 1: malformed JSON: the document is an object, not an array; set itemsPath to the array inside it`,
    );
    expect((await rejection(read('obj.json', 'data.items'))).message).toContain(
      'itemsPath "data.items" is an object, expected an array',
    );
    expect((await rejection(read('obj.json', 'data.rows'))).message).toContain(
      'itemsPath "data.rows" not found',
    );
    await tmp.write('cut.json', '[\n{"id":1},\n{"id":');
    const cut = await rejection(read('cut.json'));
    expect(cut.message).toContain('line 3');
    expect(cut.message).toContain('ends before the JSON document does');
    await tmp.write('junk.json', '[{"id":1} {"id":2}]');
    expect((await rejection(read('junk.json'))).message).toContain('unexpected "{"');
  });

  it('streams a 200k-element file and stops reading once the array is closed', async () => {
    const parts: string[] = [];
    for (let i = 0; i < 200_000; i++)
      parts.push(JSON.stringify({ id: i, name: `name ${i}`, tags: ['a', 'b'], text: 'x'.repeat(i % 50) }));
    await tmp.write('large.json', `{"count":200000,"items":[\n${parts.join(',\n')}\n],"trailing":"not read"`);
    let count = 0;
    for await (const item of createSource(
      { type: 'json', path: 'large.json', itemsPath: 'items' },
      { env: {}, baseDir: tmp.dir },
    )) {
      expect(item.data.id).toBe(count);
      expect(item.position.line).toBe(count + 2);
      count++;
    }
    expect(count).toBe(200_000);
  });
});
