package dev.redlock.sample;

import java.util.List;
import java.util.stream.IntStream;

import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/**
 * Fault injection for the demo: kill, pause, resume or restart one of the local Redis
 * lock nodes the shop started for itself, to watch the dashboard (and the locks) react.
 * Part of {@link LocalRedisNodesConfiguration}, so never in the shop's jar; answers 404
 * when {@code redlock.nodes} was configured, as it can never touch a Redis server it did
 * not start.
 *
 * <ul>
 * <li>{@code GET /api/demo/nodes}: the local nodes</li>
 * <li>{@code POST /api/demo/nodes/{index}/kill}, {@code …/pause}, {@code …/resume},
 * {@code …/restart}</li>
 * </ul>
 */
@RestController
@RequestMapping("/api/demo/nodes")
class DemoNodesController {

	private final ObjectProvider<RedisNodes> nodes;

	DemoNodesController(ObjectProvider<RedisNodes> nodes) {
		this.nodes = nodes;
	}

	@GetMapping
	List<NodeView> list() {
		RedisNodes local = local();
		return IntStream.range(0, lockNodes(local)).mapToObj((i) -> NodeView.of(i, local.node(i))).toList();
	}

	@PostMapping("/{index}/{action}")
	NodeView act(@PathVariable int index, @PathVariable String action) {
		RedisNodes local = local();
		if (index < 0 || index >= lockNodes(local)) {
			throw new ResponseStatusException(HttpStatus.NOT_FOUND, "no local node " + index);
		}
		RedisNode node = local.node(index);
		switch (action) {
			case "kill" -> node.kill();
			case "pause" -> node.pause();
			case "resume" -> node.resume();
			case "restart" -> node.restart();
			default -> throw new ResponseStatusException(HttpStatus.NOT_FOUND,
					"unknown action '" + action + "': kill, pause, resume or restart");
		}
		return NodeView.of(index, node);
	}

	/**
	 * The lock nodes come first; the last local node holds the stock and is left alone.
	 */
	private static int lockNodes(RedisNodes local) {
		return Math.min(local.size(), LocalRedisNodes.LOCK_NODE_COUNT);
	}

	private RedisNodes local() {
		RedisNodes local = this.nodes.getIfAvailable();
		if (local == null) {
			throw new ResponseStatusException(HttpStatus.NOT_FOUND,
					"the shop did not start its own Redis nodes (redlock.nodes is configured)");
		}
		return local;
	}

	record NodeView(int index, String uri, boolean running, boolean paused) {

		static NodeView of(int index, RedisNode node) {
			return new NodeView(index, node.uri(), node.isRunning(), node.isPaused());
		}

	}

}
