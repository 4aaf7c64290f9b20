import { describe, expect, it } from 'vitest';
import { secondStatement } from '../../../../src/sync/sources/sql-statement.ts';

describe('secondStatement', () => {
  it('finds a statement after the first ;', () => {
    expect(secondStatement('SELECT 1; DROP TABLE x', 'postgres')).toBe('DROP TABLE x');
    expect(secondStatement('SELECT 1;DELETE FROM t', 'mysql')).toBe('DELETE FROM t');
    // A backslash ends no string in standard postgres strings: the ; after it is real.
    expect(secondStatement("SELECT 'C:\\' AS a; DROP TABLE x", 'postgres')).toBe('DROP TABLE x');
    expect(secondStatement("SELECT 'a\\';' ; DROP TABLE x", 'mysql')).toBe('DROP TABLE x');
  });

  it('ignores ; in strings, identifiers, dollar quotes and comments, and trailing ; or comments', () => {
    for (const [sql, dialect] of [
      ["SELECT ';' AS a", 'postgres'],
      ['SELECT "a;b" FROM t', 'postgres'],
      ['SELECT $x$;$x$ AS a', 'postgres'],
      ['SELECT 1 -- ; DROP\n', 'postgres'],
      ['SELECT 1 /* ; DROP */', 'postgres'],
      ['SELECT 1;', 'postgres'],
      ['SELECT 1; -- done', 'postgres'],
      ['SELECT 1;;', 'mysql'],
      ['SELECT `a;b` FROM t', 'mysql'],
      ['SELECT 1 # ; DROP\n', 'mysql'],
    ] as const) {
      expect(secondStatement(sql, dialect), sql).toBeUndefined();
    }
  });
});
