package dev.redlock.test;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * The test certificates the kit ships for TLS nodes: a self-signed CA and a server
 * certificate for {@code localhost} and {@code 127.0.0.1} signed by it (PEM, valid for a
 * century). For tests only: the private keys are public.
 */
public final class TestCertificates {

	private static volatile TestCertificates instance;

	private final Path caCertificate;

	private final Path serverCertificate;

	private final Path serverKey;

	private TestCertificates(Path dir) {
		this.caCertificate = extract(dir, "ca.crt");
		this.serverCertificate = extract(dir, "server.crt");
		this.serverKey = extract(dir, "server.key");
	}

	/**
	 * Returns the certificates, extracted once per JVM to a temporary directory deleted
	 * on exit.
	 * @return the certificates
	 */
	public static TestCertificates get() {
		TestCertificates current = instance;
		if (current == null) {
			synchronized (TestCertificates.class) {
				current = instance;
				if (current == null) {
					try {
						Path dir = Files.createTempDirectory("redlock-test-tls");
						dir.toFile().deleteOnExit();
						current = new TestCertificates(dir);
					}
					catch (IOException e) {
						throw new UncheckedIOException("could not extract the test certificates", e);
					}
					instance = current;
				}
			}
		}
		return current;
	}

	/**
	 * Returns the CA certificate that signed the nodes' certificate: what a client must
	 * trust.
	 * @return a PEM file
	 */
	public Path caCertificate() {
		return caCertificate;
	}

	/**
	 * Returns the nodes' certificate.
	 * @return a PEM file
	 */
	public Path serverCertificate() {
		return serverCertificate;
	}

	/**
	 * Returns the nodes' private key.
	 * @return a PEM file
	 */
	public Path serverKey() {
		return serverKey;
	}

	private static Path extract(Path dir, String name) {
		Path target = dir.resolve(name);
		try (InputStream in = TestCertificates.class.getResourceAsStream("tls/" + name)) {
			if (in == null) {
				throw new IllegalStateException("missing resource dev/redlock/test/tls/" + name);
			}
			Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
			target.toFile().deleteOnExit();
			return target;
		}
		catch (IOException e) {
			throw new UncheckedIOException("could not extract " + name, e);
		}
	}

}
