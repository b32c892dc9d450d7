package dev.grpcops.admission;

/**
 * Deals each flow a hand of queues from its hash (Kubernetes' shufflesharding.Dealer): the same
 * flow always draws the same hand, and two flows rarely draw the same one, so a heavy flow can
 * crowd only the queues of its own hand.
 */
final class ShuffleSharding {

    private final int deckSize;
    private final int handSize;

    ShuffleSharding(int deckSize, int handSize) {
        this.deckSize = deckSize;
        this.handSize = handSize;
    }

    /** The hand of {@code flow}: {@code handSize} distinct queue indexes. */
    int[] deal(String flow) {
        return dealHash(hash(flow));
    }

    int[] dealHash(long hash) {
        // A partial Fisher-Yates shuffle driven by the hash's digits in a mixed radix.
        int[] deck = new int[deckSize];
        for (int i = 0; i < deckSize; i++) {
            deck[i] = i;
        }
        long rest = hash;
        for (int i = 0; i < handSize; i++) {
            int choices = deckSize - i;
            int pick = i + (int) Long.remainderUnsigned(rest, choices);
            rest = Long.divideUnsigned(rest, choices);
            int card = deck[pick];
            deck[pick] = deck[i];
            deck[i] = card;
        }
        int[] hand = new int[handSize];
        System.arraycopy(deck, 0, hand, 0, handSize);
        return hand;
    }

    /** 64 well-mixed bits of a flow's name: FNV-1a, then SplitMix64's finaliser. */
    static long hash(String flow) {
        long h = 0xcbf29ce484222325L;
        for (int i = 0; i < flow.length(); i++) {
            h ^= flow.charAt(i);
            h *= 0x100000001b3L;
        }
        h ^= h >>> 30;
        h *= 0xbf58476d1ce4e5b9L;
        h ^= h >>> 27;
        h *= 0x94d049bb133111ebL;
        return h ^ (h >>> 31);
    }
}
