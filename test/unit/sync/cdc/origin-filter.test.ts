import { describe, expect, it } from 'vitest';
import type { Pgoutput } from 'pg-logical-replication';
import { createOriginFilter } from '../../../../src/sync/cdc/origin-filter.ts';

const begin = { tag: 'begin', commitLsn: '0/10', commitTime: 0n, xid: 1 } as Pgoutput.Message;
const commit = { tag: 'commit' } as Pgoutput.Message;
const origin = (name: string) => ({ tag: 'origin', originLsn: null, originName: name }) as Pgoutput.Message;
const insert = { tag: 'insert' } as Pgoutput.Message;
const update = { tag: 'update' } as Pgoutput.Message;

/** Which messages of the sequence the filter drops, as their tags. */
function dropped(filter: ReturnType<typeof createOriginFilter>, messages: Pgoutput.Message[]): string[] {
  return messages.filter((m) => filter.drops(m)).map((m) => m.tag);
}

describe('origin filter', () => {
  it("drops the changes of a transaction carrying rowbridge's origin, and only those", () => {
    const filter = createOriginFilter('rowbridge');
    const stream = [
      begin,
      origin('rowbridge'),
      insert,
      update,
      commit,
      begin,
      insert,
      commit,
      begin,
      origin('other_node'),
      update,
      commit,
      begin,
      origin('rowbridge'),
      update,
      commit,
    ];
    expect(dropped(filter, stream)).toEqual(['insert', 'update', 'update']);
    expect(filter.dropped).toBe(3);
  });

  it('drops nothing without an origin, and never a begin, origin or commit', () => {
    const none = createOriginFilter(undefined);
    expect(dropped(none, [begin, origin('rowbridge'), insert, commit])).toEqual([]);
    const filter = createOriginFilter('rowbridge');
    expect(dropped(filter, [begin, origin('rowbridge'), commit, begin, insert, commit])).toEqual([]);
  });
});
