package dev.redlock.test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BackendSelectionTests {

	private static final String EXACT_HINT = "install redis-server (e.g. apt-get install redis-server), "
			+ "or keep com.github.codemonstur:embedded-redis on the test classpath, or start a Docker engine";

	private static final Supplier<@Nullable Path> NOT_ON_PATH = () -> null;

	private static final Supplier<@Nullable String> NO_EMBEDDED = () -> null;

	private static final Supplier<@Nullable String> EMBEDDED = () -> "redis-server-x";

	@TempDir
	Path tmp;

	@Test
	void automaticOrderIsDockerThenPathThenEmbedded() {
		Path exe = Path.of("/somewhere/redis-server");
		assertThat(Backends.select(null, () -> true, () -> exe, EMBEDDED).name()).isEqualTo("testcontainers");
		assertThat(Backends.select(" ", () -> false, () -> exe, EMBEDDED))
			.isEqualTo(new Backends.Choice("path", exe, null));
		assertThat(Backends.select(null, () -> false, NOT_ON_PATH, EMBEDDED))
			.isEqualTo(new Backends.Choice("embedded", null, "redis-server-x"));
	}

	@Test
	void choosesEmbeddedWhenPathHasNoRedisServer() throws IOException {
		Path emptyDir = Files.createDirectory(tmp.resolve("bin"));
		Backends.Choice choice = Backends.select(null, () -> false, () -> Backends.findOnPath(emptyDir.toString()),
				() -> Backends.embeddedResource(System.getProperty("os.name"), System.getProperty("os.arch")));
		assertThat(choice.name()).isEqualTo("embedded");
		assertThat(choice.resource()).startsWith("redis-server-6.2.");
	}

	@Test
	void noBackendExplainsHowToGetRedis() {
		assertThatThrownBy(() -> Backends.select(null, () -> false, NOT_ON_PATH, NO_EMBEDDED))
			.isInstanceOf(IllegalStateException.class)
			.hasMessageContaining(EXACT_HINT);
		assertThatThrownBy(() -> Backends.select("path", () -> true, NOT_ON_PATH, EMBEDDED))
			.isInstanceOf(IllegalStateException.class)
			.hasMessageContaining(EXACT_HINT);
		assertThatThrownBy(() -> Backends.select("embedded", () -> true, () -> Path.of("x"), NO_EMBEDDED))
			.isInstanceOf(IllegalStateException.class)
			.hasMessageContaining(EXACT_HINT);
		assertThatThrownBy(() -> Backends.select("testcontainers", () -> false, () -> Path.of("x"), EMBEDDED))
			.isInstanceOf(IllegalStateException.class)
			.hasMessageContaining(EXACT_HINT);
		assertThatThrownBy(() -> Backends.select("docker", () -> true, () -> Path.of("x"), EMBEDDED))
			.isInstanceOf(IllegalStateException.class)
			.hasMessageContaining("testcontainers, path, embedded");
	}

	@Test
	void forcedBackendWinsOverTheAutomaticOrder() {
		Path exe = Path.of("/somewhere/redis-server");
		assertThat(Backends.select("EMBEDDED", () -> true, () -> exe, EMBEDDED).name()).isEqualTo("embedded");
		assertThat(Backends.select("path", () -> true, () -> exe, EMBEDDED).name()).isEqualTo("path");
		assertThat(Backends.select("testcontainers", () -> true, () -> exe, EMBEDDED).name())
			.isEqualTo("testcontainers");
	}

	@Test
	void findsOnlyAnExecutableRedisServerOnPath() throws IOException {
		Path empty = Files.createDirectory(tmp.resolve("empty"));
		Path notExecutable = Files.createDirectory(tmp.resolve("plain"));
		Files.writeString(notExecutable.resolve("redis-server"), "");
		Path bin = Files.createDirectory(tmp.resolve("bin"));
		Path exe = Files.writeString(bin.resolve("redis-server"), "#!/bin/sh\n");
		assertThat(exe.toFile().setExecutable(true)).isTrue();

		assertThat(Backends.findOnPath(null)).isNull();
		assertThat(Backends.findOnPath("")).isNull();
		assertThat(Backends.findOnPath(empty.toString())).isNull();
		assertThat(Backends.findOnPath(empty + ":" + notExecutable)).isNull();
		assertThat(Backends.findOnPath(empty + "::" + notExecutable + ":" + bin)).isEqualTo(exe);
	}

	@Test
	void mapsOsAndArchitectureToTheBundledBinaries() {
		assertThat(Backends.embeddedResourceName("Linux", "amd64")).isEqualTo("redis-server-6.2.6-v5-linux-amd64");
		assertThat(Backends.embeddedResourceName("Linux", "aarch64")).isEqualTo("redis-server-6.2.7-linux-arm64");
		assertThat(Backends.embeddedResourceName("Linux", "i386")).isEqualTo("redis-server-6.2.7-linux-386");
		assertThat(Backends.embeddedResourceName("Mac OS X", "x86_64")).isEqualTo("redis-server-6.2.6-v5-darwin-amd64");
		assertThat(Backends.embeddedResourceName("Mac OS X", "aarch64"))
			.isEqualTo("redis-server-6.2.6-v5-darwin-arm64");
		assertThat(Backends.embeddedResourceName("Windows 11", "amd64")).isNull();
		assertThat(Backends.embeddedResourceName("Linux", "s390x")).isNull();
		assertThat(Backends.embeddedResource("Linux", "s390x")).isNull();
	}

	@Test
	void dockerIsNotAvailableHere() {
		assertThat(Backends.isDockerAvailable()).isFalse();
	}

}
