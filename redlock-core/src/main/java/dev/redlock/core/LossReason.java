package dev.redlock.core;

import java.util.Locale;

/**
 * Why a lease was lost: told to listeners, by {@link Lease#lossReason()}, and as the
 * {@code reason} of a loss in meters and logs.
 */
public enum LossReason {

	/**
	 * An extension, automatic or not, was not confirmed by a quorum within the validity.
	 */
	EXTENSION_FAILED,

	/** The validity ran out before the lease was released (or extended). */
	VALIDITY_RAN_OUT,

	/** The release found too few nodes still holding the lease's value. */
	FOUND_EXPIRED,

	/**
	 * The {@link Redlock} was closed while the lease was held: it can no longer be
	 * renewed or released, and its keys expire on the nodes with their TTL.
	 */
	REDLOCK_CLOSED;

	/**
	 * Returns the reason as a tag value.
	 * @return e.g. {@code extension_failed}
	 */
	public String tag() {
		return name().toLowerCase(Locale.ROOT);
	}

}
