package dev.redlock;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The field names of a JSON response shown on a documentation page, for the tests that
 * hold them against what the application answers.
 */
public final class DocumentedJson {

	private static final Pattern FIELD = Pattern.compile("\"(\\w+)\"\\s*:");

	private DocumentedJson() {
	}

	/**
	 * Every field name of a page's {@code ```json} block that contains a marker.
	 * @param page the page, from the repository's root ({@code docs/observability.md})
	 * @param marker a text the block contains, to tell it from the page's others
	 * @return the names, sorted
	 */
	public static Set<String> fields(String page, String marker) throws IOException {
		List<String> lines = Files.readAllLines(Path.of("..").resolve(page));
		List<String> blocks = new ArrayList<>();
		StringBuilder block = null;
		for (String line : lines) {
			if (block == null && line.trim().equals("```json")) {
				block = new StringBuilder();
			}
			else if (block != null && line.trim().equals("```")) {
				blocks.add(block.toString());
				block = null;
			}
			else if (block != null) {
				block.append(line).append('\n');
			}
		}
		String found = blocks.stream()
			.filter((text) -> text.contains(marker))
			.findFirst()
			.orElseThrow(() -> new IllegalStateException("no json block with " + marker + " in " + page));
		Set<String> fields = new TreeSet<>();
		Matcher matcher = FIELD.matcher(found);
		while (matcher.find()) {
			fields.add(matcher.group(1));
		}
		return fields;
	}

}
