package dev.redlock.docs;

import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;

import dev.redlock.annotation.DistributedLock;

/**
 * The lock4j example of {@code docs/migration.md}; the ShedLock one is in the
 * auto-configuration module's {@code dev.redlock.docs.IntegrationSnippets}, which has
 * ShedLock on its classpath.
 */
class MigrationSnippets {

	class Before {

		// tag::lock4j[]
		// before
		@Lock4j(keys = { "#sku" }, expire = 10000, acquireTimeout = 2000)
		public void buy(String sku) {
			// ...
		}
		// end::lock4j[]

	}

	class After {

		// tag::lock4j[]

		// after
		@DistributedLock(key = "#sku", ttl = "10s", waitTime = "2s")
		public void buy(String sku) {
			// ...
		}
		// end::lock4j[]

	}

	/**
	 * A stand-in for lock4j's {@code com.baomidou.lock.annotation.Lock4j}, with the
	 * attributes the example uses: lock4j is not on this project's classpath.
	 */
	@Retention(RetentionPolicy.RUNTIME)
	@interface Lock4j {

		String[] keys() default "";

		long expire() default -1;

		long acquireTimeout() default -1;

	}

}
