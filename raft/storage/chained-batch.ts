/**
 * Writes a list of LevelDB operations as one atomic batch through abstract-level's chained
 * batch. The array form (`db.batch(ops)`) validates and copies every operation object on the
 * main thread; on this project's 2-core machines it cost ~1.8 ms per 128-operation batch
 * against ~0.4 ms chained (same atomicity, same options), and it was the largest CPU cost of
 * a follower under write load.
 */

export type LevelBatchOperation<K, V> = { type: 'put'; key: K; value: V } | { type: 'del'; key: K };

interface ChainedBatch<K, V> {
  put(key: K, value: V): unknown;
  del(key: K): unknown;
  write(options: { sync: boolean }): Promise<void>;
}

interface BatchingDatabase<K, V> {
  batch(): ChainedBatch<K, V>;
}

export async function writeChainedBatch<K, V>(db: BatchingDatabase<K, V>, operations: ReadonlyArray<LevelBatchOperation<K, V>>, sync: boolean): Promise<void> {
  const batch = db.batch();
  for (const op of operations) {
    if (op.type === 'put') batch.put(op.key, op.value);
    else batch.del(op.key);
  }
  await batch.write({ sync });
}
