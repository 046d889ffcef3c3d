/**
 * A test kit that starts real {@code redis-server} processes on loopback, stops them
 * reliably and injects faults (kill, pause, resume, restart), with one annotation for
 * JUnit Jupiter tests and Spring tests alike: {@link dev.redlock.test.WithRedisNodes}
 * (nodes shared by the JVM run and reset before each test; in a Spring test it also sets
 * {@code redlock.nodes} and registers the nodes as a bean).
 *
 * <p>
 * Entry point without JUnit or Spring: {@link dev.redlock.test.RedisNodes#start(int)}.
 */
@org.jspecify.annotations.NullMarked
package dev.redlock.test;
