package dev.redlock.core.internal.transport;

import org.junit.jupiter.api.Test;

import dev.redlock.core.internal.protocol.NativeCall;
import redis.clients.jedis.args.RawableFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which sent command each owed reply answers, when plain commands and calls in their
 * native form are mixed on one connection.
 */
class PendingCallsTests {

	@Test
	void aPlainCommandSentBeforeTheFirstNativeCallIsReadAsPlain() {
		// a round's SET whose reply was not awaited, then the early exit's follow-up,
		// a discard sent natively behind it
		PendingCalls pending = new PendingCalls();
		pending.sentPlain();
		pending.sentNative(NativeCall.DISCARD, RawableFactory.from("value"));
		assertThat(pending.owed()).isEqualTo(2);
		assertThat(pending.oldest()).isNull();
		pending.replyRead();
		assertThat(pending.oldest()).isEqualTo(NativeCall.DISCARD);
		assertThat(pending.oldestValue()).isNotNull();
		pending.replyRead();
		assertThat(pending.owed()).isZero();
		assertThat(pending.oldest()).isNull();
	}

	@Test
	void repliesAreMatchedInOrderThroughManyMixedCommands() {
		PendingCalls pending = new PendingCalls();
		NativeCall[] sent = new NativeCall[40];
		for (int i = 0; i < sent.length; i++) {
			if (i % 3 == 1) {
				sent[i] = NativeCall.RELEASE;
				pending.sentNative(NativeCall.RELEASE, RawableFactory.from("v" + i));
			}
			else {
				pending.sentPlain();
			}
		}
		for (NativeCall expected : sent) {
			assertThat(pending.oldest()).isEqualTo(expected);
			pending.replyRead();
		}
		assertThat(pending.owed()).isZero();
	}

	@Test
	void plainCommandsAloneAreOnlyCounted() {
		PendingCalls pending = new PendingCalls();
		pending.sentPlain();
		pending.sentPlain();
		assertThat(pending.oldest()).isNull();
		pending.replyRead();
		pending.replyRead();
		assertThat(pending.owed()).isZero();
	}

}
