package dev.redlock.interceptor;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;

import org.junit.jupiter.api.Test;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.redlock.annotation.DistributedLock;
import dev.redlock.annotation.OnLocked;
import dev.redlock.autoconfigure.RedlockAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An invalid {@code @DistributedLock} fails the application at startup, naming the method
 * and attribute.
 */
class InvalidAnnotationStartupTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, RedlockAutoConfiguration.class))
		.withPropertyValues("redlock.nodes[0]=redis://127.0.0.1:7301");

	@Test
	void unparsableDurationFailsStartup() {
		this.runner.withBean(BadTtl.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(rootMessage(context.getStartupFailure())).contains("BadTtl.work()", "'ttl'", "soon");
		});
	}

	@Test
	void unparsableKeyFailsStartup() {
		this.runner.withBean(BadKey.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(rootMessage(context.getStartupFailure())).contains("BadKey.work(String)", "'key'");
		});
	}

	@Test
	void skippingAMethodThatReturnsAPrimitiveFailsStartup() {
		this.runner.withBean(SkipPrimitive.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(rootMessage(context.getStartupFailure())).contains("SkipPrimitive.count()", "'onLocked'", "SKIP",
					"int");
		});
	}

	@Test
	void aFallbackThatIsMissingOrDoesNotFitFailsStartup() {
		this.runner.withBean(FallbackWithoutName.class)
			.run((context) -> assertThat(rootMessage(context.getStartupFailure()))
				.contains("FallbackWithoutName.work(String)", "'fallback'"));
		this.runner.withBean(FallbackNotFound.class)
			.run((context) -> assertThat(rootMessage(context.getStartupFailure()))
				.contains("FallbackNotFound.work(String)", "'fallback'", "\"cached\"", "cached(String)"));
		this.runner.withBean(FallbackWrongType.class)
			.run((context) -> assertThat(rootMessage(context.getStartupFailure()))
				.contains("FallbackWrongType.work(String)", "returns Integer"));
		this.runner.withBean(FallbackWithoutStrategy.class)
			.run((context) -> assertThat(rootMessage(context.getStartupFailure()))
				.contains("FallbackWithoutStrategy.work(String)", "only used with onLocked = FALLBACK"));
	}

	@Test
	void conflictingOrInvalidAttributesFailStartup() {
		this.runner.withBean(KeyAndKeys.class)
			.run((context) -> assertThat(rootMessage(context.getStartupFailure()))
				.contains("KeyAndKeys.work(String, String)", "'keys'", "'key'"));
		this.runner.withBean(HoldLongerThanTtl.class)
			.run((context) -> assertThat(rootMessage(context.getStartupFailure())).contains("HoldLongerThanTtl.work()",
					"'minHold'", "ttl"));
		this.runner.withBean(BadCondition.class)
			.run((context) -> assertThat(rootMessage(context.getStartupFailure())).contains("BadCondition.work(int)",
					"'condition'"));
		this.runner.withBean(PlainFuture.class)
			.run((context) -> assertThat(rootMessage(context.getStartupFailure())).contains("PlainFuture.work()",
					"Future", "CompletableFuture"));
	}

	@Test
	void aTtlWithinTheClockDriftAllowanceFailsStartupNamingTheMethod() {
		this.runner.withBean(TinyTtl.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(rootMessage(context.getStartupFailure())).contains("TinyTtl.work()", "'ttl' (PT0.002S)",
					"clock drift allowance of 152 ms", "redlock.clock-drift-factor", "redlock.clock-tolerance",
					"at least 154 ms");
		});
		this.runner.withPropertyValues("redlock.restart-quarantine=0s").withBean(TinyTtl.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(rootMessage(context.getStartupFailure()))
				.contains("clock drift allowance of 2 ms", "redlock.clock-drift-factor", "at least 3 ms")
				.doesNotContain("clock-tolerance");
		});
	}

	@Test
	void aTtlFromAPlaceholderIsCheckedAtStartupToo() {
		this.runner.withBean(PlaceholderTtl.class).withPropertyValues("jobs.ttl=1ms").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(rootMessage(context.getStartupFailure())).contains("PlaceholderTtl.work()", "'ttl'",
					"clock drift allowance");
		});
		this.runner.withBean(PlaceholderTtl.class)
			.withPropertyValues("jobs.ttl=10m")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void aMinHoldBeyondTheRestartQuarantineFailsStartupWithTheWaysOut() {
		this.runner.withBean(MinHoldBeyondQuarantine.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(rootMessage(context.getStartupFailure())).contains("MinHoldBeyondQuarantine.work()",
					"'minHold' (PT5M)", "redlock.restart-quarantine = PT1M", "shorten minHold to at most PT1M",
					"raise redlock.restart-quarantine");
		});
		this.runner.withBean(MinHoldBeyondQuarantine.class)
			.withPropertyValues("redlock.restart-quarantine=10m")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void aTtlBeyondTheRestartQuarantineStartsAndIsServedByRenewal() {
		this.runner.withBean(NightlyJob.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(AopUtils.isAopProxy(context.getBean(NightlyJob.class))).isTrue();
		});
	}

	@Test
	void validAnnotationIsProxied() {
		this.runner.withBean(Fine.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(AopUtils.isAopProxy(context.getBean(Fine.class))).isTrue();
		});
	}

	private static String rootMessage(Throwable failure) {
		Throwable root = failure;
		while (root.getCause() != null) {
			root = root.getCause();
		}
		return root.getMessage();
	}

	static class BadTtl {

		@DistributedLock(ttl = "soon")
		public void work() {
		}

	}

	static class TinyTtl {

		@DistributedLock(ttl = "2ms")
		public void work() {
		}

	}

	static class PlaceholderTtl {

		@DistributedLock(ttl = "${jobs.ttl}")
		public void work() {
		}

	}

	static class MinHoldBeyondQuarantine {

		@DistributedLock(ttl = "10m", minHold = "5m")
		public void work() {
		}

	}

	/** The nightly job of the annotation's documentation, as written there. */
	static class NightlyJob {

		@DistributedLock(name = "nightly-report", ttl = "10m", minHold = "30s", waitTime = "0s",
				onLocked = OnLocked.SKIP)
		public void nightlyReport() {
		}

	}

	static class BadKey {

		@DistributedLock(key = "#id +")
		public void work(String id) {
		}

	}

	static class SkipPrimitive {

		@DistributedLock(onLocked = OnLocked.SKIP)
		public int count() {
			return 1;
		}

	}

	static class FallbackWithoutName {

		@DistributedLock(key = "#id", onLocked = OnLocked.FALLBACK)
		public String work(String id) {
			return id;
		}

	}

	static class FallbackNotFound {

		@DistributedLock(key = "#id", onLocked = OnLocked.FALLBACK, fallback = "cached")
		public String work(String id) {
			return id;
		}

		String cached(int id) {
			return "";
		}

	}

	static class FallbackWrongType {

		@DistributedLock(key = "#id", onLocked = OnLocked.FALLBACK, fallback = "cached")
		public String work(String id) {
			return id;
		}

		Integer cached(String id) {
			return 0;
		}

	}

	static class FallbackWithoutStrategy {

		@DistributedLock(key = "#id", fallback = "cached")
		public String work(String id) {
			return id;
		}

		String cached(String id) {
			return "";
		}

	}

	static class KeyAndKeys {

		@DistributedLock(key = "#a", keys = { "#a", "#b" })
		public void work(String a, String b) {
		}

	}

	static class HoldLongerThanTtl {

		@DistributedLock(ttl = "1s", minHold = "2s")
		public void work() {
		}

	}

	static class BadCondition {

		@DistributedLock(condition = "#amount >")
		public void work(int amount) {
		}

	}

	static class PlainFuture {

		@DistributedLock
		public Future<String> work() {
			return CompletableFuture.completedFuture("");
		}

	}

	static class Fine {

		@DistributedLock(key = "#id", ttl = "5s")
		public void work(String id) {
		}

	}

}
