package dev.redlock.docs;

import dev.redlock.annotation.DistributedLock;
import dev.redlock.core.LockNotAcquiredException;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Service;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * The examples of {@code docs/quick-start.md}.
 */
class QuickStartSnippets {

	// tag::stock-service[]
	@Service
	public class StockService {

		@DistributedLock(key = "'stock:' + #sku", ttl = "10s", waitTime = "2s")
		public void buy(String sku) {
			// read, think, write: one caller per SKU at a time,
			// across every instance using these nodes
		}

	}
	// end::stock-service[]

	// tag::lock-failure-advice[]
	@RestControllerAdvice
	class LockFailureAdvice {

		@ExceptionHandler
		ResponseEntity<ProblemDetail> lockNotAcquired(LockNotAcquiredException ex) {
			HttpStatus status = (ex.reason() == LockNotAcquiredException.Reason.CONTENDED) ? HttpStatus.CONFLICT
					: HttpStatus.SERVICE_UNAVAILABLE;
			ProblemDetail problem = ProblemDetail.forStatusAndDetail(status, "lock not acquired: " + ex.reason());
			return ResponseEntity.status(status).header(HttpHeaders.RETRY_AFTER, "1").body(problem);
		}

	}
	// end::lock-failure-advice[]

}
