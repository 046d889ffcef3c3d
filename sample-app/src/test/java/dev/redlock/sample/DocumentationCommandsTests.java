package dev.redlock.sample;

import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import javax.xml.parsers.DocumentBuilderFactory;

import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;
import org.xml.sax.InputSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a user copies from the README and the pages under {@code docs/} besides the Java,
 * YAML and properties examples ({@link DocumentationSnippetsTests}) names what exists:
 * <ul>
 * <li>every {@code ```xml} dependency and every Gradle coordinate of ours
 * ({@code dev.redlock:<artifact>:<version>}) names a module of the build at the project's
 * version;</li>
 * <li>every {@code mvn} command in a {@code ```sh} or {@code ```bash} block names modules
 * ({@code -pl}), profiles ({@code -P}) and a main class that exist; every {@code java}
 * command a jar the build makes and a class in it, or JMH benchmarks
 * ({@code Class.(method|method)}) and parameters ({@code -p name=}) that exist; every
 * script it runs is in the repository and executable;</li>
 * <li>every {@code curl} of the sample ({@code localhost:8080}) asks for a route of its
 * controllers or an Actuator endpoint it exposes.</li>
 * </ul>
 * Not run here: what the commands do (the sample's and the benchmarks' own tests and CI's
 * AOT pass do that) and {@code redis-cli} lines, which are for the user's own nodes. The
 * JSON responses of the observability page are held against what the endpoint and the
 * health check give by {@code RedlockEndpointTests} and
 * {@code RedlockHealthIndicatorTests}.
 */
class DocumentationCommandsTests {

	private static final Pattern GRADLE = Pattern.compile("dev\\.redlock:([\\w.-]+):([\\w.-]+)");

	private static final Pattern JMH_PATTERN = Pattern.compile("^'?([A-Z]\\w*)(?:\\.\\(?([\\w|]+)\\)?)?\\$?'?$");

	private static final Path ROOT = DocumentationPages.ROOT;

	@Test
	void everyDependencyAndCoordinateOfOursNamesAModuleAtTheProjectVersion() throws Exception {
		Document parent = pom(ROOT.resolve("pom.xml"));
		String version = childText(parent.getDocumentElement(), "version");
		Set<String> artifacts = moduleArtifacts();
		List<String> problems = new ArrayList<>();
		int checked = 0;
		for (Path page : DocumentationPages.all()) {
			String name = ROOT.relativize(page).toString();
			for (DocumentationPages.Block block : DocumentationPages.blocks(Files.readAllLines(page))) {
				if (!block.language().equals("xml")) {
					continue;
				}
				Document xml = DocumentBuilderFactory.newInstance()
					.newDocumentBuilder()
					.parse(new InputSource(new StringReader("<root>" + String.join("\n", block.lines()) + "</root>")));
				NodeList dependencies = xml.getElementsByTagName("dependency");
				for (int i = 0; i < dependencies.getLength(); i++) {
					Element dependency = (Element) dependencies.item(i);
					checked++;
					check(name + ":" + (block.open() + 1), childText(dependency, "groupId"),
							childText(dependency, "artifactId"), childText(dependency, "version"), artifacts, version,
							problems);
				}
			}
			Matcher gradle = GRADLE.matcher(Files.readString(page));
			while (gradle.find()) {
				checked++;
				check(name, "dev.redlock", gradle.group(1), gradle.group(2), artifacts, version, problems);
			}
		}
		assertThat(problems).as("dependencies that name no module of the build").isEmpty();
		assertThat(checked).as("dependencies checked").isGreaterThanOrEqualTo(3);
	}

	@Test
	void everyShellCommandNamesModulesProfilesClassesAndScriptsThatExist() throws Exception {
		Set<String> modules = moduleDirectories();
		Set<String> profiles = profiles(modules);
		List<String> problems = new ArrayList<>();
		int checked = 0;
		for (Path page : DocumentationPages.all()) {
			String name = ROOT.relativize(page).toString();
			for (DocumentationPages.Block block : DocumentationPages.blocks(Files.readAllLines(page))) {
				if (!block.language().equals("sh") && !block.language().equals("bash")) {
					continue;
				}
				for (String command : commands(block.lines())) {
					List<String> words = words(command);
					if (words.isEmpty()) {
						continue;
					}
					String where = name + ":" + (block.open() + 1) + ": " + command;
					String program = words.get(0);
					checked++;
					if (program.equals("mvn")) {
						checkMaven(where, words, modules, profiles, problems);
					}
					else if (program.equals("java")) {
						checkJava(where, words, problems);
					}
					else if (program.equals("curl")) {
						checkCurl(where, words, problems);
					}
					else if (program.contains("/")) {
						Path script = ROOT.resolve(program);
						if (!Files.isRegularFile(script) || !Files.isExecutable(script)) {
							problems.add(where + ": no executable " + program);
						}
					}
					else if (!program.equals("redis-cli") && !program.equals("xargs")) {
						problems.add(where + ": a program this test does not know: " + program);
					}
				}
			}
		}
		assertThat(problems).as("commands that name what does not exist").isEmpty();
		assertThat(checked).as("commands checked").isGreaterThanOrEqualTo(40);
	}

	private static void check(String where, String group, String artifact, String version, Set<String> artifacts,
			String projectVersion, List<String> problems) {
		if (!"dev.redlock".equals(group)) {
			return;
		}
		if (!artifacts.contains(artifact)) {
			problems.add(where + ": no module " + artifact);
		}
		if (!projectVersion.equals(version)) {
			problems.add(where + ": version " + version + ", the build's is " + projectVersion);
		}
	}

	private static void checkMaven(String where, List<String> words, Set<String> modules, Set<String> profiles,
			List<String> problems) throws IOException {
		for (int i = 1; i < words.size(); i++) {
			String word = words.get(i);
			String value = (i + 1 < words.size()) ? words.get(i + 1) : "";
			if (word.equals("-pl")) {
				for (String module : value.split(",")) {
					if (!modules.contains(module)) {
						problems.add(where + ": no module " + module);
					}
				}
			}
			else if (word.startsWith("-P")) {
				String list = (word.length() > 2) ? word.substring(2) : value;
				for (String profile : list.split(",")) {
					if (!profiles.contains(profile.replace("!", ""))) {
						problems.add(where + ": no profile " + profile);
					}
				}
			}
			else if (word.startsWith("-Dspring-boot.run.main-class=")) {
				String type = word.substring(word.indexOf('=') + 1);
				if (source(type).isEmpty()) {
					problems.add(where + ": no class " + type);
				}
			}
		}
	}

	private static void checkJava(String where, List<String> words, List<String> problems) throws IOException {
		for (int i = 1; i < words.size(); i++) {
			String word = words.get(i);
			if (word.equals("-jar") || word.equals("-cp")) {
				String jar = words.get(i + 1);
				checkJar(where, jar, problems);
				if (word.equals("-cp")) {
					String type = words.get(i + 2);
					if (source(type).isEmpty()) {
						problems.add(where + ": no class " + type);
					}
				}
				else if (jar.startsWith("benchmarks/")) {
					checkBenchmarks(where, words.subList(i + 2, words.size()), problems);
				}
				return;
			}
		}
		problems.add(where + ": neither -jar nor -cp");
	}

	/**
	 * A jar under a module's {@code target}, named by the {@code finalName} of its POM.
	 */
	private static void checkJar(String where, String jar, List<String> problems) throws IOException {
		Matcher matcher = Pattern.compile("^([\\w-]+)/target/([\\w.-]+)\\.jar$").matcher(jar);
		if (!matcher.matches()) {
			problems.add(where + ": not a module's jar: " + jar);
			return;
		}
		Path pom = ROOT.resolve(matcher.group(1)).resolve("pom.xml");
		if (!Files.isRegularFile(pom)
				|| !Files.readString(pom).contains("<finalName>" + matcher.group(2) + "</finalName>")) {
			problems.add(where + ": module " + matcher.group(1) + " makes no " + matcher.group(2) + ".jar");
		}
	}

	/** JMH's arguments: {@code -p name=values} and the benchmark patterns. */
	private static void checkBenchmarks(String where, List<String> arguments, List<String> problems)
			throws IOException {
		for (int i = 0; i < arguments.size(); i++) {
			String argument = arguments.get(i);
			if (argument.equals("-p")) {
				String parameter = arguments.get(++i).split("=")[0];
				if (!benchmarkSources().matches("(?s).*@Param\\([^)]*\\)\\s*public\\s+\\w+\\s+" + parameter + ";.*")) {
					problems.add(where + ": no benchmark parameter " + parameter);
				}
			}
			else if (argument.startsWith("-")) {
				// an option of JMH's and its value, if it has one
				if (i + 1 < arguments.size() && !arguments.get(i + 1).startsWith("-")
						&& !arguments.get(i + 1).startsWith("'")) {
					i++;
				}
			}
			else {
				for (String pattern : argument.replace("'", "").split("\\|(?![^(]*\\))")) {
					checkBenchmarkPattern(where, pattern, problems);
				}
			}
		}
	}

	private static void checkBenchmarkPattern(String where, String pattern, List<String> problems) throws IOException {
		Matcher matcher = JMH_PATTERN.matcher(pattern);
		if (!matcher.matches()) {
			problems.add(where + ": a benchmark pattern this test does not read: " + pattern);
			return;
		}
		Optional<Path> source = source("dev.redlock.benchmarks." + matcher.group(1));
		if (source.isEmpty()) {
			problems.add(where + ": no benchmark class " + matcher.group(1));
			return;
		}
		if (matcher.group(2) == null) {
			return;
		}
		String text = withSuperclasses(source.get());
		for (String method : matcher.group(2).split("\\|")) {
			if (!Pattern.compile("@Benchmark\\s+(?:@\\w+(?:\\([^)]*\\))?\\s+)*public\\s+\\S+\\s+" + method + "\\(")
				.matcher(text)
				.find()) {
				problems.add(where + ": no benchmark method " + matcher.group(1) + "." + method);
			}
		}
	}

	/**
	 * A curl of the sample: a route of one of its controllers, or an exposed endpoint.
	 */
	private static void checkCurl(String where, List<String> words, List<String> problems) throws IOException {
		String url = words.stream().filter((word) -> word.startsWith("localhost:8080")).findFirst().orElse(null);
		if (url == null) {
			problems.add(where + ": not a curl of the sample");
			return;
		}
		String path = url.substring("localhost:8080".length()).replaceAll("\\?.*$", "");
		if (path.startsWith("/actuator/")) {
			String endpoint = path.split("/")[2];
			String exposed = Files.readString(ROOT.resolve("sample-app/src/main/resources/application.yml"));
			Matcher include = Pattern.compile("include: ([\\w,]+)").matcher(exposed);
			if (!include.find() || !List.of(include.group(1).split(",")).contains(endpoint)) {
				problems.add(where + ": the sample does not expose " + endpoint);
			}
			return;
		}
		if (routes().stream().noneMatch((route) -> path.matches(route.replaceAll("\\{\\w+}", "[^/]+")))) {
			problems
				.add(where + ": no route of the sample's controllers answers " + path + " (routes: " + routes() + ")");
		}
	}

	/** The sample's routes, from its controllers' mapping annotations. */
	private static List<String> routes() throws IOException {
		List<String> routes = new ArrayList<>();
		Pattern mapping = Pattern.compile("@(Request|Get|Post|Put|Delete)Mapping(?:\\(\"([^\"]*)\"\\))?");
		for (Path file : javaFiles(ROOT.resolve("sample-app/src"))) {
			String text = Files.readString(file);
			Matcher declaration = Pattern.compile("(?m)^(?:public |final )*class ").matcher(text);
			int type = declaration.find() ? declaration.start() : text.length();
			String prefix = "";
			Matcher matcher = mapping.matcher(text);
			while (matcher.find()) {
				String value = (matcher.group(2) != null) ? matcher.group(2) : "";
				if (matcher.group(1).equals("Request") && matcher.start() < type) {
					prefix = value;
				}
				else {
					routes.add(prefix + value);
				}
			}
		}
		return routes;
	}

	/** The commands of a shell block: comments dropped, continued lines joined. */
	private static List<String> commands(List<String> lines) {
		List<String> commands = new ArrayList<>();
		StringBuilder current = new StringBuilder();
		for (String line : lines) {
			String code = line.replaceAll("\\s+#.*$", "").replaceAll("^\\s*#.*$", "").strip();
			boolean continued = code.endsWith("\\");
			current.append(continued ? code.substring(0, code.length() - 1) : code).append(' ');
			if (!continued) {
				if (!current.toString().isBlank()) {
					commands.add(current.toString().strip());
				}
				current.setLength(0);
			}
		}
		return commands;
	}

	/**
	 * A command's words: quotes kept around a word that has them, environment variables
	 * before the program dropped.
	 */
	private static List<String> words(String command) {
		List<String> words = new ArrayList<>();
		Matcher word = Pattern.compile("'[^']*'|\"[^\"]*\"|\\S+").matcher(command);
		while (word.find()) {
			String text = word.group();
			if (words.isEmpty() && text.matches("^[A-Z_]+=\\S*$")) {
				continue;
			}
			words.add(text.replace("\"", ""));
		}
		return words;
	}

	/** The directories of the build's modules. */
	private static Set<String> moduleDirectories() throws Exception {
		Set<String> modules = new LinkedHashSet<>();
		NodeList list = pom(ROOT.resolve("pom.xml")).getElementsByTagName("module");
		for (int i = 0; i < list.getLength(); i++) {
			modules.add(list.item(i).getTextContent().trim());
		}
		return modules;
	}

	/** The artifact ids of the build's modules. */
	private static Set<String> moduleArtifacts() throws Exception {
		Set<String> artifacts = new LinkedHashSet<>();
		for (String module : moduleDirectories()) {
			artifacts.add(childText(pom(ROOT.resolve(module).resolve("pom.xml")).getDocumentElement(), "artifactId"));
		}
		return artifacts;
	}

	/** Every profile id of the parent's and the modules' POMs. */
	private static Set<String> profiles(Set<String> modules) throws Exception {
		Set<String> profiles = new LinkedHashSet<>();
		List<Path> poms = new ArrayList<>();
		poms.add(ROOT.resolve("pom.xml"));
		modules.forEach((module) -> poms.add(ROOT.resolve(module).resolve("pom.xml")));
		for (Path pom : poms) {
			NodeList list = pom(pom).getElementsByTagName("profile");
			for (int i = 0; i < list.getLength(); i++) {
				profiles.add(childText((Element) list.item(i), "id"));
			}
		}
		return profiles;
	}

	private static Document pom(Path file) throws Exception {
		return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(file.toFile());
	}

	/** The text of an element's direct child, or {@code null}. */
	private static String childText(Element element, String child) {
		for (Node node = element.getFirstChild(); node != null; node = node.getNextSibling()) {
			if (node instanceof Element found && found.getTagName().equals(child)) {
				return found.getTextContent().trim();
			}
		}
		return null;
	}

	/** The source of a class, in any module's main or test sources. */
	private static Optional<Path> source(String type) throws IOException {
		String file = type.replace('.', '/') + ".java";
		for (String module : moduleDirectoriesUnchecked()) {
			for (String tree : List.of("src/main/java", "src/test/java")) {
				Path path = ROOT.resolve(module).resolve(tree).resolve(file);
				if (Files.isRegularFile(path)) {
					return Optional.of(path);
				}
			}
		}
		return Optional.empty();
	}

	/** A benchmark class's source and its superclasses' in the same package. */
	private static String withSuperclasses(Path source) throws IOException {
		StringBuilder text = new StringBuilder();
		Path current = source;
		while (current != null && Files.isRegularFile(current)) {
			String content = Files.readString(current);
			text.append(content);
			Matcher extended = Pattern.compile("class \\w+(?:<[^>]*>)? extends (\\w+)").matcher(content);
			current = extended.find() ? current.resolveSibling(extended.group(1) + ".java") : null;
		}
		return text.toString();
	}

	private static String benchmarkSources() throws IOException {
		StringBuilder text = new StringBuilder();
		for (Path file : javaFiles(ROOT.resolve("benchmarks/src/main/java"))) {
			text.append(Files.readString(file));
		}
		return text.toString();
	}

	private static List<Path> javaFiles(Path tree) throws IOException {
		try (Stream<Path> files = Files.walk(tree)) {
			return files.filter((file) -> file.toString().endsWith(".java")).sorted().toList();
		}
	}

	private static Set<String> moduleDirectoriesUnchecked() {
		try {
			return moduleDirectories();
		}
		catch (Exception ex) {
			throw new IllegalStateException("cannot read the parent POM", ex);
		}
	}

}
