package dev.redlock.test;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Nodes started to accept {@code DEBUG} go back to a saved data set without restarting:
 * what was written since the save is gone, what was deleted is back, and the server's
 * {@code run_id} stays. Runs on whichever backend the kit chooses (Redis 7 needs
 * {@code enable-debug-command}, which Redis 6.2 does not know).
 */
class SnapshotReloadTests {

	@Test
	void aReloadBringsBackTheSavedDataSetInTheSameServer() {
		try (RedisNodes nodes = RedisNodes.startWithDebugCommand(1)) {
			RedisNode node = nodes.node(0);
			String runId = runId(node);
			node.command("SET", "saved", "1");
			node.saveSnapshot();
			node.command("SET", "written-since", "2");
			node.command("DEL", "saved");

			node.reloadSnapshot();

			assertThat(node.command("GET", "saved")).isEqualTo("1");
			assertThat(node.command("EXISTS", "written-since")).isEqualTo("0");
			assertThat(runId(node)).isEqualTo(runId);
		}
	}

	private static String runId(RedisNode node) {
		for (String line : String.valueOf(node.command("INFO", "server")).split("\r?\n")) {
			if (line.startsWith("run_id:")) {
				return line.substring("run_id:".length());
			}
		}
		throw new AssertionError("no run_id in INFO server");
	}

}
