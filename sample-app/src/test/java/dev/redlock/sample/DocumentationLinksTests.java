package dev.redlock.sample;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every link between the README and the pages under {@code docs/} resolves: the file
 * exists and, for a link with a {@code #fragment}, the page has a heading of that anchor
 * (as GitHub forms it). The README stays short enough to be read through.
 */
class DocumentationLinksTests {

	private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");

	private static final Pattern HEADING = Pattern.compile("^#{1,6} (.+)$");

	private static final Path ROOT = DocumentationPages.ROOT;

	@Test
	void everyLocalLinkResolves() throws IOException {
		List<String> broken = new ArrayList<>();
		for (Path page : DocumentationPages.all()) {
			Matcher links = LINK.matcher(withoutCodeBlocks(Files.readString(page)));
			while (links.find()) {
				String target = links.group(1);
				if (target.matches("^[a-z]+:.*")) {
					continue;
				}
				String file = target.contains("#") ? target.substring(0, target.indexOf('#')) : target;
				String anchor = target.contains("#") ? target.substring(target.indexOf('#') + 1) : null;
				Path resolved = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
				if (!Files.exists(resolved)) {
					broken.add(ROOT.relativize(page) + ": " + target + " (no such file)");
				}
				else if (anchor != null && !anchors(resolved).contains(anchor)) {
					broken.add(ROOT.relativize(page) + ": " + target + " (no such heading)");
				}
			}
		}
		assertThat(broken).as("broken links").isEmpty();
	}

	@Test
	void theReadmeIsShortAndEveryDocsPageIsLinkedFromIt() throws IOException {
		String readme = Files.readString(ROOT.resolve("README.md"));
		assertThat(readme.lines().count()).as("README.md lines").isLessThanOrEqualTo(350);
		try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
			assertThat(docs.filter((path) -> path.toString().endsWith(".md"))).isNotEmpty()
				.allSatisfy((page) -> assertThat(readme).contains("](docs/" + page.getFileName()));
		}
	}

	/** The anchors GitHub gives a page's headings (outside code blocks). */
	private static Set<String> anchors(Path page) throws IOException {
		Set<String> anchors = new HashSet<>();
		if (!page.toString().endsWith(".md")) {
			return anchors;
		}
		for (String line : withoutCodeBlocks(Files.readString(page)).split("\n")) {
			Matcher heading = HEADING.matcher(line);
			if (heading.matches()) {
				anchors.add(heading.group(1)
					.trim()
					.toLowerCase(Locale.ROOT)
					.replaceAll("[^\\p{L}\\p{N} _-]", "")
					.replace(' ', '-'));
			}
		}
		return anchors;
	}

	private static String withoutCodeBlocks(String markdown) {
		return markdown.replaceAll("(?s)```.*?```", "");
	}

}
