package dev.redlock.interceptor;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.List;

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
		// #this and #root are SpEL's, not arguments: the root object, which prints its
		// identity
		assertThatIllegalArgumentException().isThrownBy(() -> resource("thisAlone", "A-1", 7))
			.withMessageContaining("attribute 'key' = \"#this\" evaluated to a " + LockExpressionRoot.class.getName());
		assertThatIllegalArgumentException().isThrownBy(() -> resource("rootAlone", "A-1", 7))
			.withMessageContaining("attribute 'key' = \"#root\" evaluated to a " + LockExpressionRoot.class.getName());
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

	@Test
	void aKeyThatWouldPrintAnObjectsIdentityNamesTheExpressionAndWhatToWriteInstead() throws Exception {
		Order order = new Order("A-1");
		assertThatIllegalArgumentException().isThrownBy(() -> resourceOf("whole", order))
			.withMessageContaining("@DistributedLock on ObjectKeys.whole(Order)")
			.withMessageContaining("attribute 'key' = \"#order\" evaluated to a " + Order.class.getName())
			.withMessageContaining("no toString() of its own")
			.withMessageContaining("give Order a toString() that identifies it");
		// SpEL turns it into text itself in a concatenation
		assertThatIllegalArgumentException().isThrownBy(() -> resourceOf("concatenated", order))
			.withMessageContaining(
					"attribute 'key' = \"'order:' + #order\" turns a " + Order.class.getName() + " into text");
		// as a String argument, where SpEL wraps the refusal
		assertThatIllegalArgumentException().isThrownBy(() -> resourceOf("argumentOfAMethod", order))
			.withMessageContaining("turns a " + Order.class.getName() + " into text");
		Order[] orders = { order };
		assertThatIllegalArgumentException().isThrownBy(() -> resourceOf("orders", (Object) orders))
			.withMessageContaining("attribute 'key' = \"#orders\" evaluated to a " + Order.class.getName() + "[]")
			.withMessageContaining("whose elements have no text of their own");
		assertThatIllegalArgumentException().isThrownBy(() -> resourceOf("concatenatedOrders", (Object) orders))
			.withMessageContaining("turns a " + Order.class.getName() + "[] into text");
	}

	@Test
	void aConditionStillComparesAndConvertsAsSpelDoes() throws Exception {
		Method method = ObjectKeys.class.getMethod("conditional", Order.class, long.class);
		LockAttributes attributes = this.source.find(method, ObjectKeys.class);
		Object[] args = { new Order("A-1"), 7 };
		assertThat(this.evaluator.conditionHolds(attributes, args, new ObjectKeys(), ObjectKeys.class)).isTrue();
		assertThat(this.evaluator.resources(attributes, args, new ObjectKeys(), ObjectKeys.class))
			.containsExactly("A-1:7");
	}

	@Test
	void objectsThatPrintTheirContentAreKeys() throws Exception {
		assertThat(resourceOf("property", new Order("A-1"))).isEqualTo("A-1");
		assertThat(resourceOf("named", new NamedOrder("A-1"))).isEqualTo("order:NamedOrder[id=A-1]");
		assertThat(resourceOf("listed", List.of("A-1", "B-2"))).isEqualTo("[A-1, B-2]");
		assertThat(resourceOf("arrayContent", (Object) new String[] { "A-1", "B-2" })).isEqualTo("[A-1, B-2]");
		// arrays of values with text are keyed by their elements, as SpEL joins them
		assertThat(resourceOf("array", (Object) new String[] { "A-1", "B-2" })).isEqualTo("A-1,B-2");
		assertThat(resourceOf("concatenatedArray", (Object) new long[] { 1, 2 })).isEqualTo("orders:1,2");
		// a value with text of its own is concatenated as SpEL converts it, not by
		// toString(): keys stay what they were before identities were refused
		assertThat(resourceOf("concatenatedList", List.of("A-1", "B-2"))).isEqualTo("orders:A-1,B-2");
	}

	private String resourceOf(String method, Object argument) throws NoSuchMethodException {
		Method annotated = Arrays.stream(ObjectKeys.class.getMethods())
			.filter((candidate) -> candidate.getName().equals(method))
			.findFirst()
			.orElseThrow();
		LockAttributes attributes = this.source.find(annotated, ObjectKeys.class);
		return this.evaluator.resources(attributes, new Object[] { argument }, new ObjectKeys(), ObjectKeys.class)
			.get(0);
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

	/** An order without a toString() of its own. */
	static class Order {

		private final String id;

		Order(String id) {
			this.id = id;
		}

		public String getId() {
			return this.id;
		}

	}

	record NamedOrder(String id) {
	}

	static class ObjectKeys {

		@DistributedLock(key = "#order")
		public void whole(Order order) {
		}

		@DistributedLock(key = "'order:' + #order")
		public void concatenated(Order order) {
		}

		@DistributedLock(key = "#ids")
		public void array(String[] ids) {
		}

		@DistributedLock(key = "'orders:' + #ids")
		public void concatenatedArray(long[] ids) {
		}

		@DistributedLock(key = "'orders:' + #ids")
		public void concatenatedList(List<String> ids) {
		}

		@DistributedLock(key = "#root.methodName.concat(#order)")
		public void argumentOfAMethod(Order order) {
		}

		@DistributedLock(key = "#orders")
		public void orders(Order[] orders) {
		}

		@DistributedLock(key = "'orders:' + #orders")
		public void concatenatedOrders(Order[] orders) {
		}

		@DistributedLock(key = "#order.id + ':' + #quantity", condition = "#order != null && #quantity > 5")
		public void conditional(Order order, long quantity) {
		}

		@DistributedLock(key = "#order.id")
		public void property(Order order) {
		}

		@DistributedLock(key = "'order:' + #order")
		public void named(NamedOrder order) {
		}

		@DistributedLock(key = "#orders")
		public void listed(List<String> orders) {
		}

		@DistributedLock(key = "T(java.util.Arrays).toString(#ids)")
		public void arrayContent(String[] ids) {
		}

	}

}
