package dev.redlock.core;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * No two classes of the core, in any of its packages, depend on each other, directly or
 * through others: each can be read, and changed, knowing only what it uses. A nested
 * class counts as part of the class it is written in (a builder and what it builds are
 * one unit).
 */
class ClassCycleTests {

	private static final String CORE = "dev.redlock.core";

	@Test
	void theCoreHasNoCycleBetweenClasses() {
		JavaClasses core = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
			.importPackages(CORE);
		assertThat(core).as("classes imported from %s", CORE).isNotEmpty();
		assertThat(cycles(dependencyGraph(core))).as("cycles between classes of %s", CORE).isEmpty();
	}

	@Test
	void aCycleIsFound() {
		Map<String, Set<String>> graph = new TreeMap<>();
		graph.put("A", Set.of("B"));
		graph.put("B", Set.of("C"));
		graph.put("C", Set.of("A", "D"));
		graph.put("D", Set.of());
		assertThat(cycles(graph)).containsExactly(List.of("A", "B", "C"));
	}

	/** Top-level class → the top-level classes of the core it uses. */
	private static Map<String, Set<String>> dependencyGraph(JavaClasses classes) {
		Map<String, Set<String>> graph = new TreeMap<>();
		for (JavaClass javaClass : classes) {
			String from = topLevel(javaClass).getName();
			Set<String> targets = graph.computeIfAbsent(from, (name) -> new TreeSet<>());
			for (Dependency dependency : javaClass.getDirectDependenciesFromSelf()) {
				JavaClass target = dependency.getTargetClass().getBaseComponentType();
				if (target.getPackageName().startsWith(CORE)) {
					String to = topLevel(target).getName();
					if (!to.equals(from)) {
						targets.add(to);
					}
				}
			}
		}
		return graph;
	}

	private static JavaClass topLevel(JavaClass javaClass) {
		JavaClass current = javaClass;
		while (current.getEnclosingClass().isPresent()) {
			current = current.getEnclosingClass().get();
		}
		return current;
	}

	/** The strongly connected components of more than one class (Tarjan), sorted. */
	private static List<List<String>> cycles(Map<String, Set<String>> graph) {
		Map<String, Integer> index = new HashMap<>();
		Map<String, Integer> lowLink = new HashMap<>();
		Deque<String> stack = new ArrayDeque<>();
		Set<String> onStack = new HashSet<>();
		List<List<String>> cycles = new ArrayList<>();
		for (String node : graph.keySet()) {
			if (!index.containsKey(node)) {
				connect(node, graph, index, lowLink, stack, onStack, cycles);
			}
		}
		return cycles;
	}

	private static void connect(String node, Map<String, Set<String>> graph, Map<String, Integer> index,
			Map<String, Integer> lowLink, Deque<String> stack, Set<String> onStack, List<List<String>> cycles) {
		index.put(node, index.size());
		lowLink.put(node, index.get(node));
		stack.push(node);
		onStack.add(node);
		for (String next : graph.getOrDefault(node, Set.of())) {
			if (!index.containsKey(next)) {
				connect(next, graph, index, lowLink, stack, onStack, cycles);
				lowLink.put(node, Math.min(lowLink.get(node), lowLink.get(next)));
			}
			else if (onStack.contains(next)) {
				lowLink.put(node, Math.min(lowLink.get(node), index.get(next)));
			}
		}
		if (lowLink.get(node).equals(index.get(node))) {
			List<String> component = new ArrayList<>();
			String member;
			do {
				member = stack.pop();
				onStack.remove(member);
				component.add(member);
			}
			while (!member.equals(node));
			if (component.size() > 1) {
				component.sort(null);
				cycles.add(component);
			}
		}
	}

}
