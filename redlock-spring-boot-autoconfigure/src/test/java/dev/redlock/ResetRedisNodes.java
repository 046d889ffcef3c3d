package dev.redlock;

import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.springframework.test.context.junit.jupiter.SpringExtension;

import dev.redlock.test.RedisNodes;
import dev.redlock.test.RedlockTestNodes;

/**
 * Resets the test context's {@link RedisNodes} before each test, ahead of the test's own
 * {@code @BeforeEach} methods: the nodes of {@link RedlockTestNodes} are shared by every
 * context of the run, so their data and faults would otherwise outlive a test.
 */
public final class ResetRedisNodes implements BeforeEachCallback {

	@Override
	public void beforeEach(ExtensionContext context) {
		SpringExtension.getApplicationContext(context).getBean(RedisNodes.class).reset();
	}

}
