package dev.redlock.sample;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * The project's Markdown pages, for the documentation tests: {@code README.md} and every
 * page under {@code docs/}.
 */
final class DocumentationPages {

	/** The repository's root: the sample's tests run in {@code sample-app}. */
	static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

	private DocumentationPages() {
	}

	/** {@code README.md}, then the pages under {@code docs/} in name order. */
	static List<Path> all() throws IOException {
		List<Path> pages = new ArrayList<>();
		pages.add(ROOT.resolve("README.md"));
		try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
			docs.filter((path) -> path.toString().endsWith(".md")).sorted().forEach(pages::add);
		}
		return pages;
	}

}
