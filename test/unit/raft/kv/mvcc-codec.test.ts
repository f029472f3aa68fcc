/**
 * The store image codec: the sliced encoder (which lets the event loop run while a large image is
 * encoded) writes exactly the bytes of the one-shot encoder, and they decode to the same image.
 */
import { expect } from 'chai';
import { decodeImage, encodeImage, encodeImageSliced } from '../../../../raft/kv/mvcc-codec';
import { MvccStore } from '../../../../raft/kv/mvcc-store';

const enc = (s: string) => Buffer.from(s, 'latin1');

describe('mvcc-codec: store images', () => {
  it('encodeImageSliced writes the bytes of encodeImage, over several slices, leases and deletions included', async () => {
    const store = new MvccStore();
    store.leaseGrant(9n, 30);
    for (let i = 0; i < 5000; i++) store.put({ key: enc(`key/${i % 700}`), value: enc(`value ${i}`), lease: i % 10 === 0 ? 9n : 0n });
    for (let i = 0; i < 50; i++) store.deleteRange({ key: enc(`key/${i}`) });
    store.compact(store.revision - 1000);
    const image = store.image();
    const sliced = await encodeImageSliced(image);
    expect(sliced.equals(encodeImage(image))).to.equal(true);
    expect(decodeImage(sliced)).to.deep.equal(decodeImage(encodeImage(image)));
  });

  it('an empty store encodes alike both ways', async () => {
    const image = new MvccStore().image();
    expect((await encodeImageSliced(image)).equals(encodeImage(image))).to.equal(true);
  });
});
