package dev.redlock.core;

import org.jspecify.annotations.Nullable;

/**
 * How one node has answered since the {@link Redlock} was built, across all commands.
 *
 * @param node the node's address without credentials
 * @param ok requests it granted or completed
 * @param rejected requests it answered with "someone else's key"
 * @param timeouts requests that got no answer within the node timeout
 * @param errors error replies and failed connections
 * @param kind what the voter is: {@code standalone} or {@code sentinel}
 * @param master the {@code host:port} of the voter's master as known now (for a Sentinel
 * voter, where the last failover left it), or {@code null} while not known
 */
public record NodeStatistics(String node, long ok, long rejected, long timeouts, long errors, String kind,
		@Nullable String master) {
}
