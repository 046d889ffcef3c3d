package dev.redlock.core;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * Thrown after work guarded by a {@link Lease} finished although the lease had been
 * {@link Lease#isLost() lost} before: the work outran its lease (or a renewal failed), so
 * another holder may have run at the same time. The lock has already been released or
 * left to expire when this is thrown.
 */
public class LeaseLostException extends RuntimeException {

	private final String lockName;

	private final String resource;

	private final Duration heldFor;

	private final Duration ttl;

	private final @Nullable LossReason reason;

	/**
	 * Creates an exception for a lost lease.
	 * @param lease the lost lease
	 * @param work what ran under it, for the message, e.g.
	 * {@code OrderService.buy(String)}
	 * @param heldFor how long the lease was held when the work finished
	 */
	public LeaseLostException(Lease lease, String work, Duration heldFor) {
		super(message(lease, work, heldFor));
		this.lockName = lease.name();
		this.resource = lease.resource();
		this.heldFor = heldFor;
		this.ttl = lease.ttl();
		this.reason = lease.lossReason().orElse(null);
	}

	private static String message(Lease lease, String work, Duration heldFor) {
		LossReason reason = lease.lossReason().orElse(null);
		String why = switch ((reason != null) ? reason : LossReason.VALIDITY_RAN_OUT) {
			case EXTENSION_FAILED -> "a renewal or extension of its lease was not confirmed by a quorum in time";
			case FOUND_EXPIRED -> "its key was gone from a majority of nodes at release (expired, evicted or "
					+ "forgotten by a restarted node)";
			case VALIDITY_RAN_OUT -> "it ran longer than its lease";
			case REDLOCK_CLOSED -> "the Redlock was closed (the application is shutting down?), so its lease could "
					+ "be neither renewed nor released";
		};
		return "Lock '" + lease.name() + "' on '" + lease.resource() + "' was lost before " + work + " returned: " + why
				+ " (held " + heldFor.toMillis() + " ms, TTL " + lease.ttl().toMillis()
				+ " ms); another caller may have run at the same time";
	}

	/**
	 * Returns the lock's name.
	 * @return the name
	 */
	public String lockName() {
		return this.lockName;
	}

	/**
	 * Returns the locked resource.
	 * @return the resource, without the key prefix
	 */
	public String resource() {
		return this.resource;
	}

	/**
	 * Returns how long the lease was held when the work finished.
	 * @return the time since acquisition
	 */
	public Duration heldFor() {
		return this.heldFor;
	}

	/**
	 * Returns the TTL the lease was acquired with.
	 * @return the TTL
	 */
	public Duration ttl() {
		return this.ttl;
	}

	/**
	 * Returns why the lease was lost.
	 * @return the reason, or {@code null} if unknown
	 */
	public @Nullable LossReason reason() {
		return this.reason;
	}

}
