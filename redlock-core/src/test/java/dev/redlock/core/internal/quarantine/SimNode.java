package dev.redlock.core.internal.quarantine;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.internal.protocol.LockScripts;

/**
 * A Redis node in a simulation: a wall clock that can step, keys that expire by that
 * clock as Redis expires them (a key is gone once the node's time in milliseconds passes
 * its expiry), the marker key, and whole-state snapshots to roll back to. Time is the
 * simulation's true time, in nanoseconds.
 */
final class SimNode {

	/** The nodes' wall clocks stand about here at true time zero: 2023-11-14. */
	static final long WALL_EPOCH_NANOS = 1_700_000_000_000_000_000L;

	final int index;

	/** Node clock minus true time. */
	private long offsetNanos;

	private Map<String, Key> keys = new HashMap<>();

	/** The node's start, in true time. */
	private long startedAt;

	private String runId;

	/** Calls of FLUSHALL, FLUSHDB and SWAPDB since the start. */
	private long flushes;

	/** Calls of DEBUG since the start. */
	private long debugs;

	private long evictedKeys;

	/** The maxmemory-policy when it may evict, else {@code null}. */
	private @Nullable String evictionPolicy;

	SimNode(int index, long offsetNanos, long startedAt) {
		this.index = index;
		this.offsetNanos = offsetNanos;
		this.startedAt = startedAt;
		this.runId = "run-" + index + "-0";
	}

	/** The node's {@code TIME} at a true time, in microseconds. */
	long timeMicros(long t) {
		return Math.floorDiv(WALL_EPOCH_NANOS + t + this.offsetNanos, 1_000);
	}

	long timeMillis(long t) {
		return Math.floorDiv(timeMicros(t), 1_000);
	}

	/** Steps the node's clock (forward when positive). */
	void step(long byNanos) {
		this.offsetNanos += byNanos;
	}

	long offsetNanos() {
		return this.offsetNanos;
	}

	/**
	 * {@code SET key value NX PX ttl} at a true time.
	 * @return whether it was set
	 */
	boolean setNx(String key, String value, long ttlMillis, long t) {
		if (get(key, t) != null) {
			return false;
		}
		this.keys.put(key, new Key(value, timeMillis(t) + ttlMillis));
		return true;
	}

	/** {@code SET key value}, no TTL. */
	void set(String key, String value) {
		this.keys.put(key, new Key(value, Long.MAX_VALUE));
	}

	/** {@code GET key} at a true time: nil once expired by the node's clock. */
	@Nullable String get(String key, long t) {
		Key stored = this.keys.get(key);
		if (stored == null) {
			return null;
		}
		if (stored.expiresAtMillis() != Long.MAX_VALUE && timeMillis(t) > stored.expiresAtMillis()) {
			this.keys.remove(key);
			return null;
		}
		return stored.value();
	}

	void delete(String key) {
		this.keys.remove(key);
	}

	/** {@code FLUSHALL}: every key goes, the marker too. */
	void flushAll() {
		this.keys = new HashMap<>();
		this.flushes++;
	}

	/** A copy of the keys, to roll back to. */
	Map<String, Key> snapshot() {
		return new HashMap<>(this.keys);
	}

	/** Reloads an older dump ({@code DEBUG RELOAD} of an older RDB). */
	void reload(Map<String, Key> snapshot) {
		this.keys = new HashMap<>(snapshot);
		this.debugs++;
	}

	/**
	 * Goes back to a snapshot of the whole process (a restored VM): keys and statistics
	 * alike, nothing shows it.
	 */
	void restore(Map<String, Key> snapshot, long flushes, long debugs, long evictedKeys) {
		this.keys = new HashMap<>(snapshot);
		this.flushes = flushes;
		this.debugs = debugs;
		this.evictedKeys = evictedKeys;
	}

	/** Starts evicting keys ({@code CONFIG SET maxmemory-policy}) and evicts one. */
	void evict(String key, String policy) {
		this.evictionPolicy = policy;
		if (this.keys.remove(key) != null) {
			this.evictedKeys++;
		}
	}

	/** Restarts without persistence at a true time. */
	void restart(long t) {
		this.keys = new HashMap<>();
		this.startedAt = t;
		this.runId = this.runId + "'";
		this.flushes = 0;
		this.debugs = 0;
		this.evictedKeys = 0;
	}

	String runId() {
		return this.runId;
	}

	long uptimeSeconds(long t) {
		return Math.max(0, (t - this.startedAt) / 1_000_000_000L);
	}

	long flushes() {
		return this.flushes;
	}

	long debugs() {
		return this.debugs;
	}

	long evictedKeys() {
		return this.evictedKeys;
	}

	/**
	 * What the node says of itself at a true time, as a greeting or a probe reads it.
	 */
	NodeReport report(long t) {
		String marker = get(NodeMarker.KEY, t);
		return new NodeReport(this.runId, uptimeSeconds(t), null, this.flushes, this.debugs, this.evictedKeys,
				this.evictionPolicy, timeMicros(t), (marker != null) ? bytes(marker) : null);
	}

	/**
	 * {@link LockScripts#WRITE_MARKER} at a true time: a compare-and-set that sets the
	 * epoch to one more than the old one, and at least the node's time in ms.
	 * @return the marker in place afterwards, {@code null} when none
	 */
	@Nullable String writeMarker(String expected, String head, String evidence, long t) {
		String current = get(NodeMarker.KEY, t);
		if (!((current != null) ? current : "").equals(expected)) {
			return current;
		}
		NodeMarker old = NodeMarker.parse((current != null) ? bytes(current) : null);
		long epoch = Math.max(((old != null) ? old.epoch() : 0) + 1, timeMillis(t));
		String marker = head + " " + epoch + " " + evidence;
		set(NodeMarker.KEY, marker);
		return marker;
	}

	/** The reply of {@code TIME}, as Redis sends it. */
	List<byte[]> timeReply(long t) {
		long micros = timeMicros(t);
		return List.of(bytes(Long.toString(micros / 1_000_000)), bytes(Long.toString(micros % 1_000_000)));
	}

	static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	/**
	 * A stored value and its expiry by the node's clock ({@link Long#MAX_VALUE}: none).
	 */
	record Key(String value, long expiresAtMillis) {
	}

}
