package dev.redlock.docs;

import dev.redlock.annotation.DistributedLock;

import org.springframework.stereotype.Service;

/**
 * The example at the top of {@code README.md}.
 */
class ReadmeSnippets {

	// tag::stock-service[]
	@Service
	class StockService {

		@DistributedLock(key = "'stock:' + #sku", ttl = "10s", waitTime = "2s")
		public void buy(String sku) {
			// read, think, write: at most one caller per SKU at a time,
			// across all instances
		}

	}
	// end::stock-service[]

}
