package dev.redlock.core.internal.waiting;

import java.util.Arrays;

import org.jspecify.annotations.Nullable;

/**
 * What the release notices of one key mean to its waiters. Every node announces each
 * release, so the first notice of a value is news; the quorum-th says that the release
 * has reached a quorum of nodes (a waiter that tried since the first notice may have lost
 * to the very lock being released); the others are echoes. A release by this instance is
 * no news at all: its waiters are told directly.
 */
final class ReleaseNotices {

	/** What a notice tells. */
	enum News {

		/** Nothing new: an echo, or this instance's own release. */
		NONE,

		/** The first notice of a release by another instance. */
		FIRST,

		/** The notice after which a quorum of nodes announced that release. */
		QUORUM

	}

	private final int quorum;

	/** The value of the last release announced. Guarded by {@code this}. */
	private byte @Nullable [] lastValue;

	/** How many nodes announced it. Guarded by {@code this}. */
	private int announcedBy;

	/** How many releases by other instances were heard of. */
	private volatile long releases;

	/** The value this instance released last. */
	private volatile byte @Nullable [] ownRelease;

	/**
	 * @param quorum how many nodes' notices of one release tell that a quorum deleted the
	 * key
	 */
	ReleaseNotices(int quorum) {
		this.quorum = quorum;
	}

	/** Notes a value this instance is releasing: its notices are not news. */
	void releasingHere(byte[] value) {
		this.ownRelease = value;
	}

	/**
	 * Tells what a node's notice of a release means.
	 * @param value the released value
	 */
	synchronized News heard(byte[] value) {
		if (Arrays.equals(value, this.ownRelease)) {
			return News.NONE;
		}
		if (!Arrays.equals(value, this.lastValue)) {
			this.lastValue = value;
			this.announcedBy = 1;
			this.releases++;
			return News.FIRST;
		}
		return (++this.announcedBy == this.quorum) ? News.QUORUM : News.NONE;
	}

	/** How many releases by other instances were heard of so far. */
	long releases() {
		return this.releases;
	}

}
