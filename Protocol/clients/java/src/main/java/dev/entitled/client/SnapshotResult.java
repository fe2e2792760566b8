package dev.entitled.client;

/**
 * The answer of {@code snapshot}.
 *
 * @param file the snapshot's file name in the data directory
 * @param sequence the last change it holds
 * @param bytes its size
 * @param durationMs how long writing it took
 * @param memberships how many memberships it holds
 */
public record SnapshotResult(String file, long sequence, long bytes, long durationMs, long memberships) {
}
