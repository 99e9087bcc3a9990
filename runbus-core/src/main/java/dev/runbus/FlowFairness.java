package dev.runbus;

/**
 * What the fair shares of a topic's capacity count ({@link SubscribeOptions#flowFairness()}, docs/flow-control.md):
 * while flow keys wait for the slots of a {@link SubscribeOptions#flowTopicCap() topic cap} or the turns of a
 * {@link SubscribeOptions#flowTopicRate() topic rate}, each gets them in proportion to its weight, its use counted
 * one of these two ways.
 */
public enum FlowFairness {

    /**
     * Each message counts its {@link Message#cost() declared cost} (1 by default): backlogged keys of equal weight
     * start the same number of messages (of cost 1). The default.
     */
    BY_COST,

    /**
     * Each message counts the time its handler ran, as the consumer measured it: backlogged keys of equal weight get
     * the same handler time, so a key whose messages take ten times as long starts a tenth as many. A message is
     * charged its key's recent mean when it is let in (the topic's, for a key not measured yet) and corrected by
     * what its handler took when its ack gives the slot back. Not with ordered consumption, nor with a
     * {@link BatchHandler} (whose entries are timed together); refused there.
     */
    BY_HANDLER_TIME
}
