package dev.redlock;

import dev.redlock.annotation.DistributedLock;

/**
 * A lock declared on an interface method only, as with a JDK proxy: for the tests that
 * the annotation is found through {@link ByCard an implementation}.
 */
public interface Payments {

	/**
	 * Pays, locked per account.
	 * @param account the account to charge
	 * @return what was done
	 */
	@DistributedLock(key = "#account")
	String pay(String account);

	/** The implementation, whose method carries no annotation of its own. */
	class ByCard implements Payments {

		@Override
		public String pay(String account) {
			return "paid";
		}

	}

}
