/**
 * Shuffle sharding, as v1.25's apiserver does it (pkg/util/shufflesharding and
 * apf_controller.go's hashFlowID): a flow (FlowSchema name, distinguisher) hashes to a 64-bit
 * number (the first eight bytes of SHA-256 of `schema \0 distinguisher`, little-endian), and the
 * number deals a hand of `handSize` distinct queues out of `queues`. A flow always gets the same
 * hand; two flows rarely get the same whole hand, so one heavy flow fills at most its own hand's
 * queues and every other flow keeps a queue it shares with nobody heavy.
 */
import { createHash } from 'node:crypto';
import { assert } from '../util';

/** v1.25's bound: the deal keeps up to 15 remainders. */
export const MAX_HAND_SIZE = 15;

export function hashFlowId(flowSchemaName: string, distinguisher: string): bigint {
  const digest = createHash('sha256').update(flowSchemaName).update('\0').update(distinguisher).digest();
  return digest.readBigUInt64LE(0);
}

/**
 * Deals `handSize` distinct cards from a deck of `deckSize`, in the order v1.25 deals them: the
 * hash is read as mixed-radix digits (deckSize, deckSize-1, ...), each digit picking among the
 * cards not yet dealt.
 */
export function dealHand(hashValue: bigint, deckSize: number, handSize: number): number[] {
  assert(handSize >= 1 && handSize <= MAX_HAND_SIZE && handSize <= deckSize, `hand of ${handSize} from a deck of ${deckSize}`);
  const remainders: number[] = [];
  let value = hashValue;
  for (let i = 0; i < handSize; i++) {
    const radix = BigInt(deckSize - i);
    remainders.push(Number(value % radix));
    value /= radix;
  }
  const hand: number[] = [];
  for (let i = 0; i < handSize; i++) {
    let card = remainders[i];
    for (let j = i; j > 0; j--) if (card >= remainders[j - 1]) card++;
    hand.push(card);
  }
  return hand;
}
