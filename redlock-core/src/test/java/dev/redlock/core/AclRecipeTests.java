package dev.redlock.core;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import dev.redlock.core.TestThreads.Running;
import dev.redlock.test.RedisNode;
import dev.redlock.test.RedisNodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The ACL recipe of {@code docs/operations.md} ("An ACL user for the starter"), read from
 * the page and given to three real nodes as it is written, with the rule the page adds
 * for the node's native command on newer servers: with the restart quarantine on, that
 * user passes the startup check and health, takes, extends, renews and releases plain,
 * fenced and minimum-hold locks, and a waiter is woken by the release notice; no node has
 * anything in its {@code ACL LOG} afterwards, so nothing was refused along the way.
 */
class AclRecipeTests {

	private static final Path PAGE = Path.of("..", "docs", "operations.md");

	private static final String HEADING = "## An ACL user for the starter";

	/** Far above the time a release notice takes, far below the waiter's retry delay. */
	private static final Duration WELL_BEFORE_A_RETRY = Duration.ofSeconds(5);

	private static final Duration QUARANTINE = Duration.ofSeconds(2);

	@Test
	void theRecipesUserLocksWithTheQuarantineOnAndIsRefusedNothing() throws Exception {
		List<String> recipe = recipe();
		assertThat(recipe.subList(0, 5)).containsExactly("ACL", "SETUSER", "locker", "on", ">change-me");
		try (RedisNodes nodes = RedisNodes.start(3)) {
			for (RedisNode node : nodes.nodes()) {
				List<String> command = new ArrayList<>(recipe);
				nativeCommandRule(node).ifPresent(command::add);
				node.command(command.toArray(String[]::new));
				node.command("ACL", "LOG", "RESET");
			}
			RedlockSettings settings = TestSupport.withQuarantine(QUARANTINE);
			try (Redlock holder = TestSupport.loggingInAs(nodes, "locker:change-me", settings);
					Redlock waiter = TestSupport.loggingInAs(nodes, "locker:change-me",
							settings.withRetryDelay(Duration.ofSeconds(30)))) {
				assertThat(holder.verifyNodes())
					.filteredOn((finding) -> finding.severity() == NodeFinding.Severity.ERROR)
					.isEmpty();
				// the nodes were started just now: the first lock waits out their
				// quarantine
				Lease lease = holder.acquire("acl-plain", QUARANTINE, QUARANTINE.multipliedBy(5));
				assertThat(lease.extend()).isTrue();
				lease.autoRenew();
				TestSupport.awaitTrue("two renewals", Duration.ofSeconds(10), () -> lease.extensionAttempts() >= 3);
				assertThat(lease.isValid()).isTrue();

				try (Lease fenced = holder.tryAcquire(LockRequest.of("acl-fenced", QUARANTINE).fenced())
					.orElseThrow()) {
					assertThat(fenced.fencingToken()).isPresent();
				}

				Running<Lease> waiting = TestThreads.start(false,
						() -> waiter.acquire("acl-plain", QUARANTINE, Duration.ofSeconds(60)));
				TestSupport.awaitSubscribed(nodes, "acl-plain", 1);
				assertThat(lease.release()).isEqualTo(ReleaseOutcome.RELEASED);
				Lease woken = waiting.await(WELL_BEFORE_A_RETRY);
				assertThat(woken.release(Duration.ofMillis(200))).isEqualTo(ReleaseOutcome.RELEASED);
				assertThat(holder.checkNodes())
					.allSatisfy((status) -> assertThat(status.counts()).as(status.toString()).isTrue());
			}
			for (RedisNode node : nodes.nodes()) {
				assertThat(node.command("ACL", "LOG")).as("ACL LOG of %s", node.uri()).isEmpty();
			}
		}
	}

	/** The recipe's words: the first code block under the heading, its lines joined. */
	static List<String> recipe() throws IOException {
		List<String> lines = Files.readAllLines(PAGE);
		int heading = lines.indexOf(HEADING);
		assertThat(heading).as("'%s' in %s", HEADING, PAGE).isNotNegative();
		int open = heading + 1;
		while (!lines.get(open).startsWith("```")) {
			open++;
		}
		List<String> words = new ArrayList<>();
		for (int i = open + 1; !lines.get(i).startsWith("```"); i++) {
			words.addAll(Arrays.asList(lines.get(i).trim().split("\\s+")));
		}
		return words;
	}

	/**
	 * The rule the page adds on servers with a native compare-and-delete: {@code +delex}
	 * on Redis 8.4 and later, {@code +delifeq} on Valkey 9 and later.
	 */
	private static Optional<String> nativeCommandRule(RedisNode node) {
		String info = String.valueOf(node.command("INFO", "server"));
		int[] valkey = version(info, "valkey_version");
		if (valkey != null) {
			return (valkey[0] >= 9) ? Optional.of("+delifeq") : Optional.empty();
		}
		int[] redis = version(info, "redis_version");
		boolean delex = redis != null && (redis[0] > 8 || (redis[0] == 8 && redis[1] >= 4));
		return delex ? Optional.of("+delex") : Optional.empty();
	}

	private static int[] version(String info, String field) {
		Matcher matcher = Pattern.compile("(?m)^" + field + ":(\\d+)\\.(\\d+)").matcher(info);
		return matcher.find() ? new int[] { Integer.parseInt(matcher.group(1)), Integer.parseInt(matcher.group(2)) }
				: null;
	}

}
