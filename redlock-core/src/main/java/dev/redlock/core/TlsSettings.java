package dev.redlock.core;

import java.util.Arrays;
import java.util.List;
import java.util.Objects;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocketFactory;

import org.jspecify.annotations.Nullable;

/**
 * How {@code rediss://} nodes are reached: the socket factory that carries the trust
 * material (and client keys, if the nodes ask for them), whether the node's certificate
 * must name its host, and which TLS protocols and cipher suites may be negotiated.
 *
 * <p>
 * Start from {@link #of(SSLContext)} or {@link #jvmDefault()} and narrow the handshake
 * with {@link #withProtocols(String...)} and {@link #withCiphers(String...)}, e.g.
 * {@code TlsSettings.of(context).withProtocols("TLSv1.3")}. A node that accepts none of
 * them fails its handshake; the acquisition's {@link LockNotAcquiredException} then lists
 * that node with the handshake error among its
 * {@link LockNotAcquiredException#failedNodes() failed nodes}.
 *
 * @param socketFactory creates the TLS sockets
 * @param verifyHostname whether the certificate must match the node's host name or IP
 * address (HTTPS rules)
 * @param protocols the protocols that may be negotiated, e.g. {@code TLSv1.3}; empty for
 * those the socket factory enables by default
 * @param ciphers the cipher suites that may be negotiated, by their standard names (e.g.
 * {@code TLS_AES_256_GCM_SHA384}); empty for those the socket factory enables by default
 */
public record TlsSettings(SSLSocketFactory socketFactory, boolean verifyHostname, List<String> protocols,
		List<String> ciphers) {

	/**
	 * Checks the values and copies the lists.
	 */
	public TlsSettings {
		Objects.requireNonNull(socketFactory, "socketFactory");
		protocols = names(protocols, "protocols");
		ciphers = names(ciphers, "ciphers");
	}

	/**
	 * Creates settings that enable the socket factory's default protocols and cipher
	 * suites.
	 * @param socketFactory creates the TLS sockets
	 * @param verifyHostname whether the certificate must match the node's host name or IP
	 * address (HTTPS rules)
	 */
	public TlsSettings(SSLSocketFactory socketFactory, boolean verifyHostname) {
		this(socketFactory, verifyHostname, List.of(), List.of());
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

	/**
	 * Returns these settings, allowing only the given protocols.
	 * @param protocols standard protocol names, e.g. {@code TLSv1.3} and {@code TLSv1.2};
	 * none for the socket factory's defaults
	 * @return the new settings
	 */
	public TlsSettings withProtocols(String... protocols) {
		return new TlsSettings(this.socketFactory, this.verifyHostname, Arrays.asList(protocols), this.ciphers);
	}

	/**
	 * Returns these settings, allowing only the given cipher suites.
	 * @param ciphers standard cipher suite names, e.g. {@code TLS_AES_256_GCM_SHA384};
	 * none for the socket factory's defaults
	 * @return the new settings
	 */
	public TlsSettings withCiphers(String... ciphers) {
		return new TlsSettings(this.socketFactory, this.verifyHostname, this.protocols, Arrays.asList(ciphers));
	}

	/**
	 * The parameters of each TLS socket: host name verification, protocols and cipher
	 * suites, or {@code null} when all three are the socket factory's defaults.
	 */
	public @Nullable SSLParameters sslParameters() {
		if (!this.verifyHostname && this.protocols.isEmpty() && this.ciphers.isEmpty()) {
			return null;
		}
		SSLParameters parameters = new SSLParameters();
		if (this.verifyHostname) {
			parameters.setEndpointIdentificationAlgorithm("HTTPS");
		}
		if (!this.protocols.isEmpty()) {
			parameters.setProtocols(this.protocols.toArray(String[]::new));
		}
		if (!this.ciphers.isEmpty()) {
			parameters.setCipherSuites(this.ciphers.toArray(String[]::new));
		}
		return parameters;
	}

	private static List<String> names(List<String> names, String what) {
		Objects.requireNonNull(names, what);
		for (String name : names) {
			if (name == null || name.isBlank()) {
				throw new IllegalArgumentException(what + " must not hold a null or blank name, was " + names);
			}
		}
		return names.stream().map(String::trim).toList();
	}

}
