package dev.entitled.client;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A pushed line of a watch ({@code {"push":"access",...}}): a covered membership changed, or its access
 * stopped by itself.
 *
 * @param cause {@code grant}, {@code claim}, {@code revoke}, {@code transfer}, {@code extend},
 *     {@code expired}, an event type, {@code erase}, or a later value
 * @param sequence the change's number; {@code null} for {@code expired} (not a change). Of two lines about
 *     one membership, keep the one with the higher sequence
 * @param membership the membership as the change left it
 * @param raw the whole line
 */
public record Push(String cause, Long sequence, Membership membership, ObjectNode raw) {
}
