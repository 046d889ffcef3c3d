package dev.redlock.core;

/**
 * How one node has answered since the {@link Redlock} was built, across all commands.
 *
 * @param node the node's address without credentials
 * @param ok requests it granted or completed
 * @param rejected requests it answered with "someone else's key"
 * @param timeouts requests that got no answer within the node timeout
 * @param errors error replies and failed connections
 */
public record NodeStatistics(String node, long ok, long rejected, long timeouts, long errors) {
}
