package dev.redlock.sample;

import java.util.LinkedHashMap;
import java.util.Map;

import dev.redlock.core.LockNotAcquiredException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * Turns failures into JSON answers. A lock held by another buyer for longer than the wait
 * time is 423 (Locked): try again. A lock that could not be taken for any other reason
 * (too few nodes could grant it, quarantined ones included; a quorum that answered too
 * late; an interrupted request) is 503 (Service Unavailable).
 */
@RestControllerAdvice
class ShopExceptionHandler {

	private static final Log logger = LogFactory.getLog(ShopExceptionHandler.class);

	@ExceptionHandler
	ResponseEntity<Map<String, Object>> lockNotAcquired(LockNotAcquiredException ex) {
		HttpStatus status = (ex.reason() == LockNotAcquiredException.Reason.CONTENDED) ? HttpStatus.LOCKED
				: HttpStatus.SERVICE_UNAVAILABLE;
		if (status == HttpStatus.SERVICE_UNAVAILABLE) {
			logger.warn(ex.getMessage());
		}
		return ResponseEntity.status(status)
			.header(HttpHeaders.RETRY_AFTER, "1")
			.body(rejected("busy: " + ex.getMessage()));
	}

	@ExceptionHandler
	ResponseEntity<Map<String, Object>> unknownSku(UnknownSkuException ex) {
		return ResponseEntity.status(HttpStatus.NOT_FOUND).body(Map.of("error", ex.getMessage()));
	}

	@ExceptionHandler
	ResponseEntity<Map<String, Object>> badRequest(IllegalArgumentException ex) {
		return ResponseEntity.badRequest().body(Map.of("error", ex.getMessage()));
	}

	private static Map<String, Object> rejected(String reason) {
		Map<String, Object> body = new LinkedHashMap<>();
		body.put("bought", false);
		body.put("reason", reason);
		return body;
	}

}
