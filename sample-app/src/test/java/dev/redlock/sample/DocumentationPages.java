package dev.redlock.sample;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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

	private static final Pattern FENCE = Pattern.compile("^```\\s*([A-Za-z0-9_+-]*)\\s*$");

	/**
	 * A fenced code block of a page.
	 *
	 * @param language what follows the opening fence, empty when nothing does
	 * @param open the index of the opening fence's line in the page's lines
	 * @param lines the block's lines, between the fences
	 */
	record Block(String language, int open, List<String> lines) {

		/**
		 * The index of the closing fence's line (the page's end for an unclosed block).
		 */
		int close() {
			return this.open + 1 + this.lines.size();
		}

	}

	/** The fenced code blocks of a page's lines, in order. */
	static List<Block> blocks(List<String> lines) {
		List<Block> blocks = new ArrayList<>();
		for (int i = 0; i < lines.size(); i++) {
			Matcher fence = FENCE.matcher(lines.get(i));
			if (!fence.matches()) {
				continue;
			}
			int end = i + 1;
			while (end < lines.size() && !lines.get(end).trim().equals("```")) {
				end++;
			}
			blocks.add(new Block(fence.group(1), i, lines.subList(i + 1, end)));
			i = end;
		}
		return blocks;
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
