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

	}

}
