package dev.redlock.sample;

import java.util.List;

/**
 * Thrown for a SKU the shop does not sell; answered with 404.
 */
class UnknownSkuException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	UnknownSkuException(String sku, List<String> known) {
		super("unknown sku '" + sku + "', try one of " + known);
	}

}
