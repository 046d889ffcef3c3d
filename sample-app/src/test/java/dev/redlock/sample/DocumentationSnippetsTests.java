package dev.redlock.sample;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import dev.redlock.autoconfigure.RedlockProperties;
import org.json.JSONArray;
import org.json.JSONObject;
import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.handler.NoUnboundElementsBindHandler;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.core.env.EnumerablePropertySource;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.PropertiesPropertySource;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.io.FileSystemResource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * Every Java, YAML and properties example in the README and the pages under {@code docs/}
 * is a copy of a compiled source or of a resource this test binds, so an example cannot
 * rot unnoticed:
 * <ul>
 * <li>each {@code ```java}, {@code ```kotlin}, {@code ```yaml}/{@code ```yml} and
 * {@code ```properties} block is preceded by {@code <!-- snippet: path#tag -->}, the path
 * from the repository root; the block must equal the region of that file between
 * {@code // tag::tag[]} (or {@code # tag::tag[]}) and the matching {@code end::tag[]} (a
 * tag may be opened several times: its regions are joined), or the whole file for
 * {@code path#} or {@code path}; the region loses its common indentation (a leading tab
 * counts as 4 spaces, the formatter's tabs against the docs' spaces) and trailing
 * whitespace is ignored; a Java block starts with the source's imports that its region
 * uses, in their order and groups, so that a reader sees where every type comes
 * from;</li>
 * <li>the Java sources are under {@code dev.redlock.docs} in this module's test sources
 * or, for the examples that need Reactor, ShedLock or Spring Integration and for the test
 * kit's (whose inner test classes this module's Surefire would offer JUnit), in the
 * auto-configuration module's, so they are compiled with every build;</li>
 * <li>each YAML and properties resource under {@code src/test/resources/docs} binds into
 * a Spring {@code Environment}: its {@code redlock.*} keys to {@link RedlockProperties},
 * failing on any key that is not one of its properties, and every other key must be a
 * property in the configuration metadata on the classpath.</li>
 * </ul>
 */
class DocumentationSnippetsTests {

	private static final Pattern SNIPPET = Pattern.compile("^<!-- snippet: ([^#\\s]+)(?:#(\\S*))? -->$");

	private static final Set<String> CHECKED = Set.of("java", "kotlin", "yaml", "yml", "properties");

	private static final Path ROOT = DocumentationPages.ROOT;

	private static final Path RESOURCES = Path.of("src/test/resources/docs").toAbsolutePath();

	@Test
	void everyJavaYamlAndPropertiesExampleIsItsSource() throws IOException {
		List<String> problems = new ArrayList<>();
		int checked = 0;
		for (Path page : DocumentationPages.all()) {
			List<String> lines = Files.readAllLines(page);
			String name = ROOT.relativize(page).toString();
			for (DocumentationPages.Block block : DocumentationPages.blocks(lines)) {
				if (CHECKED.contains(block.language())) {
					checked++;
					String problem = check(name, lines, block.open(), block.close());
					if (problem != null) {
						problems.add(problem);
					}
				}
			}
		}
		assertThat(problems).as("examples that differ from their sources").isEmpty();
		assertThat(checked).as("examples checked").isGreaterThanOrEqualTo(20);
	}

	@Test
	void everyYamlAndPropertiesSnippetBinds() throws IOException {
		List<Path> resources;
		try (Stream<Path> files = Files.list(RESOURCES)) {
			resources = files.sorted().toList();
		}
		assertThat(resources).isNotEmpty();
		Set<String> metadata = metadataProperties();
		for (Path resource : resources) {
			PropertySource<?> source = load(resource);
			bindRedlock(source);
			assertThat(((EnumerablePropertySource<?>) source).getPropertyNames())
				.as("keys of %s not in the configuration metadata", resource.getFileName())
				.allSatisfy((key) -> assertThat(key.startsWith("redlock.") || isKnown(key, metadata))
					.as("%s: unknown property %s", resource.getFileName(), key)
					.isTrue());
		}
	}

	@Test
	void aMisspeltRedlockPropertyFailsToBind() {
		MapPropertySource misspelt = new MapPropertySource("misspelt",
				Map.of("redlock.nodes[0]", "redis://localhost:6379", "redlock.restart-quarantne", "0s"));
		assertThatException().isThrownBy(() -> bindRedlock(misspelt))
			.withStackTraceContaining("redlock.restart-quarantne");
	}

	private static String check(String page, List<String> lines, int open, int close) throws IOException {
		String where = page + ":" + (open + 1);
		Matcher snippet = (open > 0) ? SNIPPET.matcher(lines.get(open - 1).trim()) : null;
		if (snippet == null || !snippet.matches()) {
			return where + ": no <!-- snippet: path#tag --> comment on the line before the block";
		}
		Path source = ROOT.resolve(snippet.group(1)).normalize();
		if (!Files.isRegularFile(source)) {
			return where + ": no such file " + snippet.group(1);
		}
		String tag = snippet.group(2);
		List<String> sourceLines = Files.readAllLines(source);
		List<String> expected = region(sourceLines, tag);
		if (expected == null) {
			return where + ": no tag '" + tag + "' in " + snippet.group(1);
		}
		if (source.toString().endsWith(".java")) {
			expected = withImports(importsUsed(sourceLines, expected), expected);
		}
		List<String> actual = lines.subList(open + 1, close).stream().map(DocumentationSnippetsTests::trimEnd).toList();
		int differing = 0;
		while (differing < expected.size() && differing < actual.size()
				&& expected.get(differing).equals(actual.get(differing))) {
			differing++;
		}
		if (differing == expected.size() && differing == actual.size()) {
			return null;
		}
		return where + ": differs from " + snippet.group(1) + ((tag != null && !tag.isEmpty()) ? "#" + tag : "")
				+ " at line " + (open + 2 + differing) + " of the page:\n  page:   "
				+ ((differing < actual.size()) ? "'" + actual.get(differing) + "'" : "(block ends)") + "\n  source: "
				+ ((differing < expected.size()) ? "'" + expected.get(differing) + "'" : "(region ends)");
	}

	/**
	 * The lines of the tagged region (all regions of that tag, joined), tag lines left
	 * out, with a leading tab as 4 spaces and the common indentation removed; the whole
	 * file for no tag; {@code null} if the tag is missing.
	 */
	private static List<String> region(List<String> source, String tag) {
		List<String> region = new ArrayList<>();
		boolean whole = tag == null || tag.isEmpty();
		boolean found = whole;
		boolean inside = whole;
		for (String line : source) {
			String trimmed = line.trim();
			boolean tagLine = trimmed.matches("^(//|#)\\s*(tag|end)::[\\w.-]*\\[\\]$");
			if (!whole && trimmed.matches("^(//|#)\\s*tag::" + Pattern.quote(tag) + "\\[\\]$")) {
				inside = true;
				found = true;
			}
			else if (!whole && trimmed.matches("^(//|#)\\s*end::" + Pattern.quote(tag) + "\\[\\]$")) {
				inside = false;
			}
			else if (inside && !tagLine) {
				String kept = trimEnd(detab(line));
				// where two regions of a tag meet, their blank lines count once
				if (!kept.isEmpty() || region.isEmpty() || !region.get(region.size() - 1).isEmpty()) {
					region.add(kept);
				}
			}
		}
		if (!found) {
			return null;
		}
		int indent = region.stream()
			.filter((line) -> !line.isEmpty())
			.mapToInt((line) -> line.length() - line.stripLeading().length())
			.min()
			.orElse(0);
		while (!region.isEmpty() && region.get(region.size() - 1).isEmpty() && whole) {
			region.remove(region.size() - 1);
		}
		return region.stream().map((line) -> line.isEmpty() ? line : line.substring(indent)).toList();
	}

	/**
	 * The imports of a Java source that a region uses (the imported simple name, or a
	 * static import's member, is a word of it), in their order and groups.
	 */
	private static List<List<String>> importsUsed(List<String> source, List<String> region) {
		String text = String.join("\n", region);
		List<List<String>> groups = new ArrayList<>();
		List<String> group = new ArrayList<>();
		for (String line : source) {
			String trimmed = line.trim();
			if (trimmed.isEmpty() && !group.isEmpty()) {
				groups.add(group);
				group = new ArrayList<>();
			}
			else if (trimmed.startsWith("import ")) {
				String name = trimmed.substring(trimmed.lastIndexOf('.') + 1, trimmed.length() - 1);
				if (Pattern.compile("\\b" + Pattern.quote(name) + "\\b").matcher(text).find()) {
					group.add(trimmed);
				}
			}
			else if (!trimmed.isEmpty() && !trimmed.startsWith("package ")) {
				break;
			}
		}
		if (!group.isEmpty()) {
			groups.add(group);
		}
		return groups;
	}

	/** The imports, a group to a paragraph, then a blank line and the region. */
	private static List<String> withImports(List<List<String>> imports, List<String> region) {
		if (imports.isEmpty()) {
			return region;
		}
		List<String> lines = new ArrayList<>();
		for (List<String> group : imports) {
			lines.addAll(group);
			lines.add("");
		}
		lines.addAll(region);
		return lines;
	}

	private static String detab(String line) {
		int tabs = 0;
		while (tabs < line.length() && line.charAt(tabs) == '\t') {
			tabs++;
		}
		return "    ".repeat(tabs) + line.substring(tabs);
	}

	private static String trimEnd(String line) {
		return line.stripTrailing();
	}

	private static PropertySource<?> load(Path resource) throws IOException {
		String name = resource.getFileName().toString();
		if (name.endsWith(".properties")) {
			Properties properties = new Properties();
			try (InputStream in = Files.newInputStream(resource)) {
				properties.load(in);
			}
			return new PropertiesPropertySource(name, properties);
		}
		List<PropertySource<?>> documents = new YamlPropertySourceLoader().load(name, new FileSystemResource(resource));
		assertThat(documents).as(name + " documents").hasSize(1);
		return documents.get(0);
	}

	/**
	 * Binds {@code redlock.*} of the source to {@link RedlockProperties}, failing on a
	 * key that is none of its properties; placeholders such as {@code ${REDIS_PASSWORD}}
	 * are given a value.
	 */
	private static void bindRedlock(PropertySource<?> source) {
		StandardEnvironment environment = new StandardEnvironment();
		environment.getPropertySources().addFirst(source);
		environment.getPropertySources().addLast(new MapPropertySource("placeholders", placeholders()));
		Binder binder = Binder.get(environment);
		BindHandler strict = new NoUnboundElementsBindHandler(BindHandler.DEFAULT);
		RedlockProperties properties = binder.bindOrCreate("redlock", Bindable.of(RedlockProperties.class), strict);
		assertThat(properties.nodes()).allSatisfy((node) -> assertThat(node).doesNotContain("${"));
	}

	private static Map<String, Object> placeholders() {
		Map<String, Object> placeholders = new HashMap<>();
		placeholders.put("REDIS_PASSWORD", "secret");
		return placeholders;
	}

	/**
	 * Whether a key is a property of the configuration metadata, or lies under a
	 * {@code Map} property of it; {@code management.health.<name>.enabled} is the switch
	 * every health contributor has.
	 */
	private static boolean isKnown(String key, Set<String> metadata) {
		if (metadata.contains(key) || key.matches("^management\\.health\\.[a-z0-9-]+\\.enabled$")) {
			return true;
		}
		return metadata.stream().filter((name) -> name.startsWith("map:")).anyMatch((name) -> {
			String prefix = name.substring(4);
			return key.startsWith(prefix + ".");
		});
	}

	/**
	 * Every property in the metadata on the classpath; {@code Map} ones as
	 * {@code map:name}.
	 */
	private static Set<String> metadataProperties() throws IOException {
		Set<String> names = new TreeSet<>();
		Enumeration<URL> files = DocumentationSnippetsTests.class.getClassLoader()
			.getResources("META-INF/spring-configuration-metadata.json");
		for (URL file : Collections.list(files)) {
			try (InputStream in = file.openStream()) {
				JSONArray properties = new JSONObject(new String(in.readAllBytes(), StandardCharsets.UTF_8))
					.optJSONArray("properties");
				for (int i = 0; properties != null && i < properties.length(); i++) {
					JSONObject property = properties.getJSONObject(i);
					String name = property.getString("name");
					names.add(name);
					if (property.optString("type").startsWith("java.util.Map<")) {
						names.add("map:" + name);
					}
				}
			}
		}
		assertThat(names).as("configuration metadata").contains("management.endpoint.redlock.access");
		return names;
	}

}
