/**
 * One copy of each distinct piece of the `metadata.managedFields[].fieldsV1` trees among the
 * watch cache's objects.
 *
 * Parsed, a fieldsV1 tree is the largest part of a typical object on the heap (a Pod of 3.7 KiB
 * of JSON takes 8.5 KiB parsed, about half of it its managed fields: a hundred small objects),
 * and nearly all of it is the same from object to object: the Pods of one ReplicaSet, the objects
 * one controller or one manifest writes, record the same fields. Not the whole tree, though: a
 * Pod's tree names its own service-account volume (`k:{"name":"kube-api-access-x7k2p"}`). So
 * every subtree is shared on its own, bottom up: two trees that differ in one key share all the
 * rest. This keeps the cache's heap near its objects' JSON size and leaves the garbage collector
 * far fewer objects to mark, which is what slows every request once a collection is large.
 *
 * Invariants: a shared subtree is frozen (cached objects are shared with every reader already;
 * fieldsV1 trees are never changed in place: src/apply decodes them and encodes new ones), so a
 * reader that tried to change one would fail loudly instead of changing every object holding it.
 * Subtrees are shared only when their JSON text is the same, keys in the same order, so an object
 * encodes to exactly the bytes it did before. The table holds its subtrees weakly: a subtree no
 * object holds any more is collected, and its entry removed after it.
 */
import { createHash } from 'node:crypto';
import { isJsonObject, type JsonObject } from '../apis/object';

/** Subtrees whose JSON is at most this long are keyed by it; longer ones by its digest. */
const TEXT_KEY_MAX = 64;

export class SharedFieldSets {
  private readonly subtrees = new Map<string, WeakRef<JsonObject>>();
  private readonly forget = new FinalizationRegistry<string>((key) => {
    // The key may since name a newer subtree, made after this one became unreachable.
    if (this.subtrees.get(key)?.deref() === undefined) this.subtrees.delete(key);
  });

  /** Replaces each fieldsV1 tree of `object`, and every subtree of it, by the shared equal one. */
  adopt(object: JsonObject): void {
    const metadata = object.metadata;
    if (!isJsonObject(metadata) || !Array.isArray(metadata.managedFields)) return;
    for (const entry of metadata.managedFields) {
      if (isJsonObject(entry) && isJsonObject(entry.fieldsV1)) entry.fieldsV1 = this.share(entry.fieldsV1).node;
    }
  }

  /** Distinct subtrees held (for tests). */
  get size(): number {
    return this.subtrees.size;
  }

  /** The shared subtree equal to `node` (after its children were shared), with its JSON text. */
  private share(node: JsonObject): { node: JsonObject; text: string } {
    let text = '{';
    for (const [name, value] of Object.entries(node)) {
      let valueText: string;
      if (isJsonObject(value)) {
        const child = this.share(value);
        // A frozen node (adopted before) already holds shared children.
        if (child.node !== value && !Object.isFrozen(node)) node[name] = child.node;
        valueText = child.text;
      } else {
        valueText = JSON.stringify(value) ?? 'null';
      }
      text += `${text.length > 1 ? ',' : ''}${JSON.stringify(name)}:${valueText}`;
    }
    text += '}';
    // A digest, not the text, keys a long subtree: the text of one no other object shares would
    // double what it costs. SHA-256, so that no one can make two subtrees collide.
    const key = text.length <= TEXT_KEY_MAX ? text : createHash('sha256').update(text).digest('base64');
    const shared = this.subtrees.get(key)?.deref();
    if (shared !== undefined) return { node: shared, text };
    Object.freeze(node);
    this.subtrees.set(key, new WeakRef(node));
    this.forget.register(node, key);
    return { node, text };
  }
}

