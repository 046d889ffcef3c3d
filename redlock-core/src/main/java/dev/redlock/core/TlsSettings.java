package dev.redlock.core;

import java.util.Objects;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocketFactory;

/**
 * How {@code rediss://} nodes are reached: the socket factory that carries the trust
 * material (and client keys, if the nodes ask for them), and whether the node's
 * certificate must name its host.
 *
 * @param socketFactory creates the TLS sockets
 * @param verifyHostname whether the certificate must match the node's host name or IP
 * address (HTTPS rules)
 */
public record TlsSettings(SSLSocketFactory socketFactory, boolean verifyHostname) {

	/**
	 * Checks the values.
	 */
	public TlsSettings {
		Objects.requireNonNull(socketFactory, "socketFactory");
	}

	/**
	 * Returns the JVM's default trust store, with host name verification.
	 * @return the default TLS settings
	 */
	public static TlsSettings jvmDefault() {
		return new TlsSettings((SSLSocketFactory) SSLSocketFactory.getDefault(), true);
	}

	/**
	 * Returns settings that trust what the given context trusts, with host name
	 * verification.
	 * @param context an initialised SSL context, e.g. from a trust store holding the
	 * nodes' CA
	 * @return the TLS settings
	 */
	public static TlsSettings of(SSLContext context) {
		return new TlsSettings(context.getSocketFactory(), true);
	}

}
