package dev.redlock.interceptor;

import org.junit.jupiter.api.Test;
import org.springframework.mock.env.MockEnvironment;

import dev.redlock.annotation.DistributedLock;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The variables a key expression sees: each argument by its parameter name and as
 * {@code #a0}/{@code #p0}, and the root object.
 */
class LockKeyEvaluatorTests {

	private final LockAttributeSource source = new LockAttributeSource(
			new MockEnvironment()::resolveRequiredPlaceholders);

	private final LockKeyEvaluator evaluator = new LockKeyEvaluator(null);

	@Test
	void argumentsByNameAndByPosition() throws Exception {
		assertThat(resource("byName", "A-1", 7)).isEqualTo("A-1/7");
		assertThat(resource("byPosition", "A-1", 7)).isEqualTo("A-1/7/A-1/7");
		assertThat(resource("rootAndArgument", "A-1", 7)).isEqualTo("rootAndArgument:A-1");
	}

	@Test
	void anArgumentThatIsNullOrAPositionBeyondTheParametersNamesTheExpression() {
		assertThatIllegalArgumentException().isThrownBy(() -> resource("argumentAlone", null, 7))
			.withMessageContaining("@DistributedLock on Keys.argumentAlone(String, int)")
			.withMessageContaining("attribute 'key' = \"#orderId\"")
			.withMessageContaining("evaluated to null");
		assertThatIllegalArgumentException().isThrownBy(() -> resource("beyondTheParameters", "A-1", 7))
			.withMessageContaining("attribute 'key' = \"#p2\"")
			.withMessageContaining("evaluated to null");
	}

	@Test
	void aKeyThatNamesOneArgumentReadsItAsAnyExpressionWould() throws Exception {
		// read straight from the arguments, without SpEL: the same resources as through
		// it
		assertThat(resource("quantityAlone", "A-1", 7)).isEqualTo("7").isEqualTo(resource("quantityInSpel", "A-1", 7));
		assertThat(resource("secondByPosition", "A-1", 7)).isEqualTo("7");
		assertThat(resource("argumentAlone", "A-1", 7)).isEqualTo("A-1");
		// #this and #root are SpEL's, not arguments
		assertThat(resource("thisAlone", "A-1", 7)).startsWith(LockExpressionRoot.class.getName());
		assertThat(resource("rootAlone", "A-1", 7)).startsWith(LockExpressionRoot.class.getName());
		assertThatIllegalArgumentException().isThrownBy(() -> resource("noSuchArgument", "A-1", 7))
			.withMessageContaining("attribute 'key' = \"#orderNumber\"")
			.withMessageContaining("evaluated to null");
		assertThatIllegalArgumentException().isThrownBy(() -> resource("argumentAlone", "", 7))
			.withMessageContaining("evaluated to an empty string");
	}

	@Test
	void oneMethodWithADifferentKeyFromEachOfTwoInterfacesLocksEachKey() throws Exception {
		// both classes run SharedTransfer.transfer, locked by the key of their own
		// interface
		LockAttributes byPayer = this.source.find(LocksPayer.class.getMethod("transfer", String.class, String.class),
				PayerLocked.class);
		LockAttributes byPayee = this.source.find(LocksPayee.class.getMethod("transfer", String.class, String.class),
				PayeeLocked.class);
		Object[] args = { "payer-1", "payee-2" };
		for (int call = 0; call < 2; call++) {
			assertThat(this.evaluator.resources(byPayer, args, new PayerLocked(), PayerLocked.class))
				.containsExactly("payer-1");
			assertThat(this.evaluator.resources(byPayee, args, new PayeeLocked(), PayeeLocked.class))
				.containsExactly("payee-2");
		}
	}

	private String resource(String method, Object... args) throws NoSuchMethodException {
		LockAttributes attributes = this.source.find(Keys.class.getMethod(method, String.class, int.class), Keys.class);
		return this.evaluator.resources(attributes, args, new Keys(), Keys.class).get(0);
	}

	static class Keys {

		@DistributedLock(key = "#orderId + '/' + #quantity")
		public void byName(String orderId, int quantity) {
		}

		@DistributedLock(key = "#a0 + '/' + #a1 + '/' + #p0 + '/' + #p1")
		public void byPosition(String orderId, int quantity) {
		}

		@DistributedLock(key = "#root.methodName + ':' + #orderId")
		public void rootAndArgument(String orderId, int quantity) {
		}

		@DistributedLock(key = "#orderId")
		public void argumentAlone(String orderId, int quantity) {
		}

		@DistributedLock(key = "#p2")
		public void beyondTheParameters(String orderId, int quantity) {
		}

		@DistributedLock(key = "#quantity")
		public void quantityAlone(String orderId, int quantity) {
		}

		@DistributedLock(key = "(#quantity)")
		public void quantityInSpel(String orderId, int quantity) {
		}

		@DistributedLock(key = "#a1")
		public void secondByPosition(String orderId, int quantity) {
		}

		@DistributedLock(key = "#this")
		public void thisAlone(String orderId, int quantity) {
		}

		@DistributedLock(key = "#root")
		public void rootAlone(String orderId, int quantity) {
		}

		@DistributedLock(key = "#orderNumber")
		public void noSuchArgument(String orderId, int quantity) {
		}

	}

	interface LocksPayer {

		@DistributedLock(key = "#payer")
		void transfer(String payer, String payee);

	}

	interface LocksPayee {

		@DistributedLock(key = "#payee")
		void transfer(String payer, String payee);

	}

	static class SharedTransfer {

		public void transfer(String payer, String payee) {
		}

	}

	static class PayerLocked extends SharedTransfer implements LocksPayer {

	}

	static class PayeeLocked extends SharedTransfer implements LocksPayee {

	}

}
