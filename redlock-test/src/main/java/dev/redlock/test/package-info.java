/**
 * A test kit that starts real {@code redis-server} processes on loopback, stops them
 * reliably and injects faults (kill, pause, resume, restart), with a JUnit Jupiter
 * extension ({@link dev.redlock.test.WithRedisNodes}) and a Spring TestContext hook
 * ({@link dev.redlock.test.RedlockTestNodes}).
 *
 * <p>
 * Entry point: {@link dev.redlock.test.RedisNodes#start(int)}.
 */
@org.jspecify.annotations.NullMarked
package dev.redlock.test;
