package dev.redlock.docs;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import javax.sql.DataSource;

import dev.redlock.annotation.DistributedLock;
import dev.redlock.core.Lease;
import dev.redlock.core.LockNotAcquiredException;
import dev.redlock.core.LockRequest;
import dev.redlock.core.Redlock;
import dev.redlock.core.RedlockSettings;
import dev.redlock.interceptor.LockContext;
import dev.redlock.test.RedisNodes;
import dev.redlock.test.WithRedisNodes;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.stereotype.Service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The complete fencing example of {@code docs/annotation.md}, run against a database (H2,
 * in memory): a write under a fenced lock carries the lock's token, and the table refuses
 * a write whose token is lower than the last one it took, as from a holder that stalled
 * past its lease while another took the lock and wrote.
 */
@SpringBootTest
@WithRedisNodes(count = 3)
class AccountFencingTests {

	@Autowired
	Accounts accounts;

	@Autowired
	DataSource dataSource;

	@Autowired
	RedisNodes nodes;

	@BeforeEach
	void createTable() throws SQLException {
		try (Connection connection = this.dataSource.getConnection();
				Statement statement = connection.createStatement()) {
			statement.execute("DROP TABLE IF EXISTS account");
			// tag::schema[]
			statement.execute("CREATE TABLE account (id BIGINT PRIMARY KEY, balance BIGINT NOT NULL, "
					+ "fence BIGINT NOT NULL DEFAULT 0)");
			// end::schema[]
			statement.execute("INSERT INTO account (id, balance) VALUES (1, 100)");
		}
	}

	@Test
	void aWriteUnderTheLockCarriesItsToken() throws SQLException {
		this.accounts.setBalance(1, 80);
		assertThat(read("balance")).isEqualTo(80);
		long token = read("fence");
		assertThat(token).isPositive();
		// the same holder may write again with its token
		this.accounts.write(1, 70, token);
		assertThat(read("balance")).isEqualTo(70);
	}

	@Test
	void aHolderThatStalledPastItsLeaseIsRefusedByTheTable() throws SQLException {
		RedlockSettings settings = RedlockSettings.defaults().withRestartQuarantine(Duration.ZERO);
		try (Redlock otherInstance = Redlock.builder().nodes(this.nodes.uris()).settings(settings).build()) {
			// holder A: a fenced lock of one second, then a stall past it
			Lease stalled = otherInstance.tryAcquire(LockRequest.of("account:1", Duration.ofSeconds(1)).fenced())
				.orElseThrow();
			long staleToken = stalled.fencingToken().getAsLong();
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
			while (stalled.isValid()) {
				assertThat(System.nanoTime() - deadline).as("A's lease ran out within 10 s").isNegative();
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
			}
			// holder B: the service, once A's keys have expired on the nodes
			awaitWritten(80);
			assertThat(read("fence")).isGreaterThan(staleToken);
			// A wakes up and writes with its old token
			assertThatExceptionOfType(StaleTokenException.class)
				.isThrownBy(() -> this.accounts.write(1, 999, staleToken));
			assertThat(read("balance")).isEqualTo(80);
		}
	}

	/**
	 * Calls the service until its lock is free (A's keys expire on each node by
	 * themselves).
	 */
	private void awaitWritten(long balance) throws SQLException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
		while (true) {
			try {
				this.accounts.setBalance(1, balance);
				return;
			}
			catch (LockNotAcquiredException ex) {
				assertThat(System.nanoTime() - deadline).as("the lock was free within 10 s").isNegative();
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
			}
		}
	}

	private long read(String column) throws SQLException {
		try (Connection connection = this.dataSource.getConnection();
				Statement statement = connection.createStatement();
				ResultSet row = statement.executeQuery("SELECT " + column + " FROM account WHERE id = 1")) {
			assertThat(row.next()).isTrue();
			return row.getLong(1);
		}
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	@Import(Accounts.class)
	static class TestApplication {

		@Bean
		DataSource dataSource() {
			JdbcDataSource dataSource = new JdbcDataSource();
			dataSource.setURL("jdbc:h2:mem:accounts;DB_CLOSE_DELAY=-1");
			return dataSource;
		}

	}

	// tag::accounts[]
	@Service
	static class Accounts {

		private final DataSource dataSource;

		Accounts(DataSource dataSource) {
			this.dataSource = dataSource;
		}

		@DistributedLock(key = "'account:' + #id", ttl = "10s", waitTime = "0s", fencing = true)
		public void setBalance(long id, long balance) throws SQLException {
			long token = LockContext.fencingToken().orElseThrow();
			write(id, balance, token);
		}

		/**
		 * Writes only with a token at least the last one the row took: a holder whose
		 * lease ran out, and whose lock someone else took since, is refused.
		 */
		void write(long id, long balance, long token) throws SQLException {
			try (Connection connection = this.dataSource.getConnection();
					PreparedStatement update = connection
						.prepareStatement("UPDATE account SET balance = ?, fence = ? WHERE id = ? AND fence <= ?")) {
				update.setLong(1, balance);
				update.setLong(2, token);
				update.setLong(3, id);
				update.setLong(4, token);
				if (update.executeUpdate() == 0) {
					throw new StaleTokenException("account " + id + " is missing or took a token above " + token);
				}
			}
		}

	}

	static class StaleTokenException extends IllegalStateException {

		StaleTokenException(String message) {
			super(message);
		}

	}
	// end::accounts[]

}
