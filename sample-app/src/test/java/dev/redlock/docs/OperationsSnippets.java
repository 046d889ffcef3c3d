package dev.redlock.docs;

import dev.redlock.core.RedlockListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.stereotype.Component;

/**
 * The example of {@code docs/operations.md}.
 */
class OperationsSnippets {

	// tag::audit-listener[]
	@Component
	class LockAuditListener implements RedlockListener {

		private static final Logger logger = LoggerFactory.getLogger(LockAuditListener.class);

		@Override
		public void acquireFinished(AcquireEvent event) {
			logger.info("lock {}: {} in {} ms, {} attempt(s)", event.lockName(), event.outcome().tag(),
					event.duration().toMillis(), event.attempts());
		}

		@Override
		public void leaseReleased(ReleaseEvent event) {
			logger.info("lock {}: released ({}) after {} ms", event.lockName(), event.outcome(),
					event.heldFor().toMillis());
		}

	}
	// end::audit-listener[]

}
