package dev.redlock.sample;

import org.springframework.stereotype.Component;

/**
 * The store a fenced lock protects, kept in memory for the demo: it remembers the highest
 * fencing token it has seen and refuses any write that carries a lower one, so a holder
 * that paused past its lease (and does not know it) cannot overwrite the work of the
 * holder after it.
 */
@Component
class FencedLedger {

	private long highestToken;

	private String balance = "";

	/**
	 * Writes, unless the token is older than one already seen.
	 * @return whether the write was accepted
	 */
	synchronized boolean write(long token, String balance) {
		if (token < this.highestToken) {
			return false;
		}
		this.highestToken = token;
		this.balance = balance;
		return true;
	}

	synchronized String balance() {
		return this.balance;
	}

	synchronized long highestToken() {
		return this.highestToken;
	}

}
