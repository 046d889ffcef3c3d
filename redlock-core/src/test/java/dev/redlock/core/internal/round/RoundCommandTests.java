package dev.redlock.core.internal.round;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.redlock.core.internal.protocol.LockScripts;
import dev.redlock.core.internal.protocol.RawArgument;
import redis.clients.jedis.CommandArguments;
import redis.clients.jedis.Protocol.Command;
import redis.clients.jedis.args.Rawable;
import redis.clients.jedis.exceptions.JedisNoScriptException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * A lock script called by digest is called again by source where a node lost it: the same
 * keys and arguments, and only the answers the node could not give are replaced.
 */
class RoundCommandTests {

	private static final RawArgument KEY = RawArgument.of("key");

	private static final RawArgument VALUE = RawArgument.of("value");

	@Test
	void theCallBySourceHasTheSameKeysAndArguments() {
		RoundCommand command = RoundCommand
			.of(LockScripts.call(Command.EVALSHA, LockScripts.RELEASE.sha1(), KEY, VALUE));
		assertThat(command.callsScript()).isTrue();
		RoundCommand bySource = command.bySource();
		assertThat(bySource).isNotNull();
		assertThat(bySource.callsScript()).as("the call by source needs no second try").isFalse();
		assertThat(written(bySource))
			.containsExactly(List.of("EVAL", text(LockScripts.RELEASE.source()), "1", "key", "value"));
	}

	@Test
	void aCommandThatCallsNoScriptOfOursByDigestHasNoCallBySource() {
		RoundCommand ping = RoundCommand.of(new CommandArguments(Command.PING));
		assertThat(ping.callsScript()).isFalse();
		assertThat(ping.bySource()).isNull();
		RoundCommand unknown = RoundCommand
			.of(LockScripts.call(Command.EVALSHA, RawArgument.of("0123456789abcdef"), KEY, VALUE));
		assertThat(unknown.callsScript()).isTrue();
		assertThat(unknown.bySource()).as("a digest not ours").isNull();
	}

	@Test
	void aBatchCallsEachOfOurScriptsBySource() {
		RoundCommand batch = RoundCommand
			.batch(List.of(LockScripts.call(Command.EVALSHA, LockScripts.RELEASE.sha1(), KEY, VALUE),
					LockScripts.call(Command.EVALSHA, LockScripts.EXTEND.sha1(), KEY, VALUE, RawArgument.of(10))));
		assertThat(written(batch.bySource())).containsExactly(
				List.of("EVAL", text(LockScripts.RELEASE.source()), "1", "key", "value"),
				List.of("EVAL", text(LockScripts.EXTEND.source()), "1", "key", "value", "10"));
	}

	@Test
	void onlyOneNodesCommandGoesAgainWhereAClusterRedirectsIt() {
		RoundCommand release = RoundCommand
			.of(LockScripts.call(Command.EVALSHA, LockScripts.RELEASE.sha1(), KEY, VALUE));
		assertThat(release.followsRedirections()).isTrue();
		assertThat(release.forNodeIfAny(3)).isSameAs(release);
		RoundCommand batch = RoundCommand.batch(List.of(new CommandArguments(Command.PING)));
		assertThat(batch.followsRedirections()).as("a batch's calls stay refusals").isFalse();
		assertThatIllegalStateException().isThrownBy(batch::asking);
		RoundCommand perNode = RoundCommand.perNode(new RoundCommand[] { release, null });
		assertThat(perNode.forNodeIfAny(1)).as("a node it has no command for").isNull();
		assertThatIllegalStateException().isThrownBy(perNode::asking);
	}

	@Test
	void aBatchKeepsTheAnswersOfTheCallsThatRan() {
		JedisNoScriptException noScript = new JedisNoScriptException("NOSCRIPT No matching script");
		NodeReply byDigest = NodeReply.replied(2, Arrays.asList(1L, noScript, noScript), 10);
		NodeReply bySource = NodeReply.replied(2, Arrays.asList(0L, 1L, 0L), 20);
		assertThat(RoundCommand.lacksScript(byDigest)).isTrue();
		assertThat(RoundCommand.lacksScript(bySource)).isFalse();
		NodeReply merged = RoundCommand.merge(byDigest, bySource);
		// run again, the first release found nothing to delete: its first answer stands
		assertThat(merged.value()).isEqualTo(List.of(1L, 1L, 0L));
		assertThat(merged.node()).isEqualTo(2);
	}

	@Test
	void aSingleCallTakesTheWholeReplyBySource() {
		NodeReply byDigest = NodeReply.failed(0, new JedisNoScriptException("NOSCRIPT No matching script"), 10);
		NodeReply bySource = NodeReply.replied(0, 1L, 20);
		assertThat(RoundCommand.lacksScript(byDigest)).isTrue();
		assertThat(RoundCommand.merge(byDigest, bySource)).isSameAs(bySource);
	}

	@Test
	void aCommandThatDiffersByNodeGivesEachNodeItsOwnAndGoesBySourceNodeByNode() {
		RoundCommand[] byNode = new RoundCommand[3];
		byNode[0] = RoundCommand.of(LockScripts.call(Command.EVALSHA, LockScripts.RELEASE.sha1(), KEY, VALUE));
		byNode[2] = RoundCommand.of(new CommandArguments(Command.GET).add("{m2}:marker"));
		RoundCommand perNode = RoundCommand.perNode(byNode);
		assertThat(perNode.forNode(0)).isSameAs(byNode[0]);
		assertThat(perNode.forNode(2)).isSameAs(byNode[2]);
		assertThatIllegalStateException().as("no command for a node not asked").isThrownBy(() -> perNode.forNode(1));
		assertThatIllegalStateException().as("a node's own is what is written").isThrownBy(() -> perNode.writeTo(null));
		assertThat(perNode.callsScript()).as("node 0's calls a script").isTrue();
		RoundCommand bySource = perNode.bySource();
		assertThat(bySource).isNotNull();
		assertThat(written(bySource.forNode(0)))
			.containsExactly(List.of("EVAL", text(LockScripts.RELEASE.source()), "1", "key", "value"));
		assertThat(bySource.forNode(2)).as("no script: the same command").isSameAs(byNode[2]);
		assertThatIllegalArgumentException().as("a node's own command differs by node")
			.isThrownBy(() -> RoundCommand.perNode(new RoundCommand[] { perNode }));
		assertThat(RoundCommand.of(new CommandArguments(Command.PING)).forNode(5)).as("one command for all")
			.isNotNull();
	}

	private static List<List<String>> written(RoundCommand command) {
		return command.calls().stream().map((call) -> {
			List<String> words = new ArrayList<>();
			for (Rawable word : call) {
				words.add(new String(word.getRaw()));
			}
			return words;
		}).toList();
	}

	private static String text(RawArgument argument) {
		return new String(argument.getRaw());
	}

}
