package dev.entitled.client;

import java.time.Instant;

/**
 * What a watch delivers: a pushed line, a gap (the connection dropped and the watch was made again: lines
 * may have been missed), or the end of the stream.
 */
public sealed interface WatchEvent permits WatchEvent.Pushed, WatchEvent.Gap, WatchEvent.Ended {

    /** A pushed line: a covered membership changed or its access stopped. */
    record Pushed(Push push) implements WatchEvent {
    }

    /**
     * The watch's connection dropped at {@code lostAt} and the watch was in force again at
     * {@code resumedAt}: pushed lines of that time may be missing. Re-read the state you rely on
     * ({@code check}, {@code customer}, {@code memberships}). Always delivered before the next push.
     *
     * @param lostAt when the connection was found lost
     * @param resumedAt when every target was watched again
     * @param reason why the connection dropped
     */
    record Gap(Instant lostAt, Instant resumedAt, String reason) implements WatchEvent {
    }

    /**
     * The last event: the watch was closed ({@code error} is {@code null}), or could not be made again
     * after a reconnection ({@code error} says why: the token was refused, say).
     */
    record Ended(EntitledException error) implements WatchEvent {
    }
}
