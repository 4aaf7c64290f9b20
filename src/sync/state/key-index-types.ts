/** What the index knows of one key: the row holding it and the hash rowbridge last wrote there. */
export interface IndexEntry {
  rowId: string;
  /** Content hash of the payload last written by this job; '' when unknown. */
  hash: string;
}

export interface KeyIndex {
  /**
   * Rebuilds the index from the worksheet's rows (key field only). Hashes of rows
   * whose id did not change are kept, so an unchanged re-run writes nothing; keys no
   * longer in the worksheet disappear. Returns the number of keys and of duplicates.
   */
  rebuild(rows: AsyncIterable<{ key: string; rowId: string }>): Promise<{ keys: number; duplicates: number }>;
  getMany(keys: readonly string[]): Promise<Map<string, IndexEntry>>;
  setMany(entries: ReadonlyMap<string, IndexEntry>): Promise<void>;
  removeMany(keys: readonly string[]): Promise<void>;
  /** Every key with its row, streamed (for mirror deletes). */
  entries(): AsyncGenerator<[string, IndexEntry]>;
  size(): Promise<number>;
  clear(): Promise<void>;
}
