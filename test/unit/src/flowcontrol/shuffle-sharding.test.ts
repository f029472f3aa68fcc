import { expect } from 'chai';
import { dealHand, hashFlowId } from '../../../../src/flowcontrol';

describe('flowcontrol: shuffle sharding', () => {
  it('hashes a flow the same way every time, and two flows apart', () => {
    expect(hashFlowId('global-default', 'alice')).to.equal(hashFlowId('global-default', 'alice'));
    expect(hashFlowId('global-default', 'alice')).to.not.equal(hashFlowId('global-default', 'bob'));
    // The separator keeps ("ab", "c") apart from ("a", "bc").
    expect(hashFlowId('ab', 'c')).to.not.equal(hashFlowId('a', 'bc'));
  });

  it('deals the same hand to the same flow, of distinct queues within the deck', () => {
    for (let user = 0; user < 500; user++) {
      const hash = hashFlowId('global-default', `user-${user}`);
      const hand = dealHand(hash, 128, 6);
      expect(dealHand(hash, 128, 6)).to.deep.equal(hand);
      expect(new Set(hand).size).to.equal(6);
      for (const card of hand) expect(card).to.be.within(0, 127);
    }
  });

  it('deals whole decks as permutations', () => {
    for (let value = 0n; value < 24n; value++) expect([...dealHand(value, 4, 4)].sort()).to.deep.equal([0, 1, 2, 3]);
    // Every permutation of 4 cards appears once for the 24 values below 4!.
    const seen = new Set<string>();
    for (let value = 0n; value < 24n; value++) seen.add(dealHand(value, 4, 4).join());
    expect(seen.size).to.equal(24);
  });

  it('spreads flows over the queues', () => {
    const firstCards = new Map<number, number>();
    for (let user = 0; user < 6400; user++) {
      const card = dealHand(hashFlowId('fs', `u${user}`), 64, 1)[0];
      firstCards.set(card, (firstCards.get(card) ?? 0) + 1);
    }
    expect(firstCards.size).to.equal(64);
    for (const count of firstCards.values()) expect(count).to.be.within(50, 150);
  });
});
