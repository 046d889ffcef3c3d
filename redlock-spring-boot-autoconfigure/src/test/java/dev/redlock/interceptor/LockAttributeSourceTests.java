package dev.redlock.interceptor;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Flow;
import java.util.concurrent.Future;

import org.junit.jupiter.api.Test;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.mock.env.MockEnvironment;

import dev.redlock.Payments;
import dev.redlock.annotation.DistributedLock;
import dev.redlock.annotation.OnLeaseLost;
import dev.redlock.annotation.Renewal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

class LockAttributeSourceTests {

	private final MockEnvironment environment = new MockEnvironment().withProperty("orders.lock-ttl", "7s");

	private final LockAttributeSource source = new LockAttributeSource(this.environment::resolveRequiredPlaceholders);

	@Test
	void resolvesAttributesOnce() throws Exception {
		Method method = Valid.class.getMethod("buy", String.class);
		LockAttributes attributes = this.source.find(method, Valid.class);
		assertThat(attributes).isNotNull();
		assertThat(attributes.name()).isEqualTo("Valid.buy");
		assertThat(attributes.keySource()).isEqualTo("'stock:' + #sku");
		assertThat(attributes.ttl()).isEqualTo(Duration.ofSeconds(10));
		assertThat(attributes.waitTime()).isEqualTo(Duration.ofMillis(500));
		assertThat(attributes.description()).isEqualTo("Valid.buy(String)");
		assertThat(this.source.find(method, Valid.class)).isSameAs(attributes);
	}

	@Test
	void emptyAttributesMeanDefaults() throws Exception {
		LockAttributes attributes = this.source.find(Valid.class.getMethod("nightly"), Valid.class);
		assertThat(attributes.key()).isNull();
		assertThat(attributes.ttl()).isNull();
		assertThat(attributes.waitTime()).isNull();
		assertThat(attributes.name()).isEqualTo("reports");
	}

	@Test
	void resolvesPlaceholders() throws Exception {
		LockAttributes attributes = this.source.find(Valid.class.getMethod("placeholder"), Valid.class);
		assertThat(attributes.ttl()).isEqualTo(Duration.ofSeconds(7));
		assertThat(attributes.waitTime()).isEqualTo(Duration.ofMinutes(1));
	}

	@Test
	void unannotatedMethodHasNoAttributes() throws Exception {
		assertThat(this.source.find(Valid.class.getMethod("free"), Valid.class)).isNull();
	}

	@Test
	void findsTheAnnotationOnAnInterfaceMethod() throws Exception {
		Method method = Payments.class.getMethod("pay", String.class);
		LockAttributes attributes = this.source.find(method, Payments.ByCard.class);
		assertThat(attributes).isNotNull();
		assertThat(attributes.name()).isEqualTo("ByCard.pay");
	}

	@Test
	void unparsableTtlNamesMethodAndAttribute() {
		assertThatIllegalStateException().isThrownBy(() -> find(Invalid.class, "badTtl"))
			.withMessageContaining("Invalid.badTtl()")
			.withMessageContaining("'ttl'")
			.withMessageContaining("ten seconds")
			.withMessageContaining("not a duration");
	}

	@Test
	void zeroTtlIsRefused() {
		assertThatIllegalStateException().isThrownBy(() -> find(Invalid.class, "zeroTtl"))
			.withMessageContaining("Invalid.zeroTtl()")
			.withMessageContaining("'ttl'")
			.withMessageContaining("at least 1 ms");
	}

	@Test
	void negativeWaitTimeIsRefused() {
		assertThatIllegalStateException().isThrownBy(() -> find(Invalid.class, "negativeWait"))
			.withMessageContaining("'waitTime'")
			.withMessageContaining("must not be negative");
	}

	@Test
	void unresolvablePlaceholderIsRefused() {
		assertThatIllegalStateException().isThrownBy(() -> find(Invalid.class, "missingPlaceholder"))
			.withMessageContaining("Invalid.missingPlaceholder()")
			.withMessageContaining("'waitTime'")
			.withMessageContaining("${no.such.property}");
	}

	@Test
	void placeholderResolvingToGarbageShowsTheResolvedValue() {
		LockAttributeSource garbage = new LockAttributeSource(new StandardEnvironment()::resolveRequiredPlaceholders);
		assertThatIllegalStateException()
			.isThrownBy(() -> garbage.find(Invalid.class.getMethod("javaHomeTtl"), Invalid.class))
			.withMessageContaining("'ttl'")
			.withMessageContaining("resolved to");
	}

	@Test
	void unparsableKeyIsRefused() {
		assertThatIllegalStateException().isThrownBy(() -> find(Invalid.class, "badKey"))
			.withMessageContaining("Invalid.badKey()")
			.withMessageContaining("'key'")
			.withMessageContaining("not a valid SpEL expression");
	}

	@Test
	void completionStagesAndReactiveTypesAreFollowedPlainFuturesRefused() throws Exception {
		assertThat(find(Valid.class, "async").asynchronous()).isTrue();
		assertThat(find(Valid.class, "buy", String.class).asynchronous()).isFalse();
		// Reactor is on the test classpath: Spring's adapters cover Flow.Publisher too
		assertThat(find(Valid.class, "publisher").reactive()).isTrue();
		assertThatIllegalStateException().isThrownBy(() -> find(Invalid.class, "future"))
			.withMessageContaining("Invalid.future()")
			.withMessageContaining("returns Future");
	}

	private LockAttributes find(Class<?> type, String method, Class<?>... parameterTypes) throws Exception {
		return this.source.find(type.getMethod(method, parameterTypes), type);
	}

	static class Valid {

		@DistributedLock
		public CompletableFuture<String> async() {
			return CompletableFuture.completedFuture("done");
		}

		@DistributedLock
		public Flow.Publisher<String> publisher() {
			return (subscriber) -> {
			};
		}

		@DistributedLock(key = "'stock:' + #sku", ttl = "10s", waitTime = "500ms")
		public void buy(String sku) {
		}

		@DistributedLock(name = "reports")
		public void nightly() {
		}

		@DistributedLock(ttl = "${orders.lock-ttl}", waitTime = "${orders.lock-wait:PT1M}")
		public void placeholder() {
		}

		public void free() {
		}

	}

	static class Invalid {

		@DistributedLock(ttl = "ten seconds")
		public void badTtl() {
		}

		@DistributedLock(ttl = "0s")
		public void zeroTtl() {
		}

		@DistributedLock(waitTime = "-1s")
		public void negativeWait() {
		}

		@DistributedLock(waitTime = "${no.such.property}")
		public void missingPlaceholder() {
		}

		@DistributedLock(ttl = "${java.home}")
		public void javaHomeTtl() {
		}

		@DistributedLock(key = "'order:' + ")
		public void badKey() {
		}

		@DistributedLock
		public Future<String> future() {
			return CompletableFuture.completedFuture("done");
		}

	}

	@Test
	void renewalAttributesAreResolvedOnce() throws Exception {
		LockAttributes defaults = find(Renewing.class, "defaults");
		assertThat(defaults.autoRenew()).isNull();
		assertThat(defaults.maxHold()).isNull();
		assertThat(defaults.onLeaseLost()).isEqualTo(OnLeaseLost.LOG);
		LockAttributes on = find(Renewing.class, "on");
		assertThat(on.autoRenew()).isTrue();
		assertThat(on.maxHold()).isEqualTo(Duration.ofSeconds(7));
		assertThat(on.onLeaseLost()).isEqualTo(OnLeaseLost.THROW);
		assertThat(find(Renewing.class, "off").autoRenew()).isFalse();
	}

	@Test
	void unparsableMaxHoldNamesMethodAndAttribute() {
		assertThatIllegalStateException().isThrownBy(() -> find(Renewing.class, "badMaxHold"))
			.withMessageContaining(
					"Invalid @DistributedLock on Renewing.badMaxHold(): attribute 'maxHold' = \"forever\"")
			.withMessageContaining("not a duration");
	}

	@Test
	void zeroMaxHoldIsRefused() {
		assertThatIllegalStateException().isThrownBy(() -> find(Renewing.class, "zeroMaxHold"))
			.withMessageContaining("Renewing.zeroMaxHold()")
			.withMessageContaining("attribute 'maxHold' = \"0s\" must be positive");
	}

	@Test
	void maxHoldWithoutRenewalIsRefused() {
		assertThatIllegalStateException().isThrownBy(() -> find(Renewing.class, "maxHoldButOff"))
			.withMessageContaining("Renewing.maxHoldButOff()")
			.withMessageContaining("attribute 'maxHold' = \"1m\" has no effect with autoRenew = OFF");
	}

	static class Renewing {

		@DistributedLock
		public void defaults() {
		}

		@DistributedLock(autoRenew = Renewal.ON, maxHold = "${orders.lock-ttl}", onLeaseLost = OnLeaseLost.THROW)
		public void on() {
		}

		@DistributedLock(autoRenew = Renewal.OFF)
		public void off() {
		}

		@DistributedLock(autoRenew = Renewal.ON, maxHold = "forever")
		public void badMaxHold() {
		}

		@DistributedLock(autoRenew = Renewal.ON, maxHold = "0s")
		public void zeroMaxHold() {
		}

		@DistributedLock(autoRenew = Renewal.OFF, maxHold = "1m")
		public void maxHoldButOff() {
		}

	}

}
