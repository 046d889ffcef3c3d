package dev.redlock.interceptor

import java.time.Duration
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Test
import org.springframework.beans.factory.annotation.Autowired
import org.springframework.boot.autoconfigure.EnableAutoConfiguration
import org.springframework.boot.test.context.SpringBootTest
import org.springframework.context.annotation.Configuration
import org.springframework.context.annotation.Import

import dev.redlock.annotation.DistributedLock
import dev.redlock.annotation.OnLocked
import dev.redlock.core.Redlock
import dev.redlock.test.WithRedisNodes

/**
 * A Kotlin `suspend fun` under `@DistributedLock` holds its lock until the coroutine
 * completes, not only until its first suspension point: Spring bridges the call to a
 * `Mono`, which the interceptor locks like any other.
 */
@SpringBootTest(properties = ["redlock.default-wait-time=0s"])
@WithRedisNodes(count = 3)
class CoroutineLockTests {

	@Autowired
	lateinit var reports: Reports

	@Autowired
	lateinit var redlock: Redlock

	@Test
	fun `a suspend function holds its lock across its suspension points`() = runBlocking {
		val suspended = CompletableDeferred<Unit>()
		val finish = CompletableDeferred<Unit>()
		val report = async { reports.generate("daily", suspended, finish) }
		withTimeout(10_000) { suspended.await() }
		// the coroutine is suspended inside the method: its lock is still held
		assertThat(redlock.tryAcquire("report:daily", Duration.ofSeconds(1))).isEmpty()
		assertThat(reports.generateQuietly("daily")).isEqualTo("skipped")
		finish.complete(Unit)
		assertThat(withTimeout(10_000) { report.await() }).isEqualTo("daily done")
		// released once the coroutine completed
		val deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos()
		var again = redlock.tryAcquire("report:daily", Duration.ofSeconds(1))
		while (again.isEmpty && System.nanoTime() < deadline) {
			delay(10)
			again = redlock.tryAcquire("report:daily", Duration.ofSeconds(1))
		}
		assertThat(again).isPresent()
		again.get().release()
		Unit
	}

	@Test
	fun `a suspend function that throws releases its lock`() = runBlocking {
		val failure = runCatching { reports.fail("weekly") }.exceptionOrNull()
		assertThat(failure).isInstanceOf(IllegalStateException::class.java).hasMessage("no data for weekly")
		val lease = redlock.tryAcquire("report:weekly", Duration.ofSeconds(1))
		assertThat(lease).isPresent()
		lease.get().release()
		Unit
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(Reports::class)
	open class TestApplication

	open class Reports {

		@DistributedLock(key = "'report:' + #name", ttl = "10s")
		open suspend fun generate(name: String, suspended: CompletableDeferred<Unit>,
				finish: CompletableDeferred<Unit>): String {
			delay(5)
			suspended.complete(Unit)
			finish.await()
			delay(5)
			return "$name done"
		}

		// tag::suspend[]
		@DistributedLock(key = "'report:' + #name", ttl = "10s", onLocked = OnLocked.FALLBACK, fallback = "skipped")
		open suspend fun generateQuietly(name: String): String {
			delay(1)
			return "$name done"
		}

		open suspend fun skipped(name: String): String {
			delay(1)
			return "skipped"
		}
		// end::suspend[]

		@DistributedLock(key = "'report:' + #name", ttl = "10s")
		open suspend fun fail(name: String): String {
			delay(5)
			throw IllegalStateException("no data for $name")
		}

	}

}
