package dev.redlock.core;

import java.util.Set;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * The core's rooms: the API in {@code dev.redlock.core}, the implementation in
 * {@code dev.redlock.core.internal} and its packages, in layers that only look down:
 * thread, protocol, transport, round, quarantine, the algorithm, waiting, lease, and the
 * API's entry points ({@link Redlock}, {@link Lease}) on top. The API's other types
 * (settings, listener, exceptions, values) are the words every layer speaks; they use
 * nothing of the implementation. Nothing outside {@code redlock-core} uses the
 * implementation: the modules that depend on the core check that themselves.
 */
@AnalyzeClasses(packages = "dev.redlock.core", importOptions = ImportOption.DoNotIncludeTests.class)
class CoreArchitectureTests {

	private static final String API = "dev.redlock.core";

	private static final String INTERNAL = "dev.redlock.core.internal";

	/**
	 * The API's entry points, the only classes of the API package that use the
	 * implementation (their nested classes included).
	 */
	private static final Set<String> ENTRY_POINTS = Set.of(Redlock.class.getName(), Lease.class.getName(),
			LockRequest.class.getName(), Acquisitions.class.getName(), RedlockInternals.class.getName());

	@ArchTest
	static final ArchRule coreDependsOnNothingOfSpring = noClasses().that()
		.resideInAPackage("dev.redlock.core..")
		.should()
		.dependOnClassesThat()
		.resideInAnyPackage("org.springframework..");

	@ArchTest
	static final ArchRule layersOnlyLookDown = layeredArchitecture().consideringOnlyDependenciesInLayers()
		.layer("Entry points")
		.definedBy(entryPoint())
		.layer("Lease")
		.definedBy(INTERNAL + ".lease..")
		.layer("Waiting")
		.definedBy(INTERNAL + ".waiting..")
		.layer("Algorithm")
		.definedBy(INTERNAL)
		.layer("Quarantine")
		.definedBy(INTERNAL + ".quarantine..")
		.layer("Round")
		.definedBy(INTERNAL + ".round..")
		.layer("Transport")
		.definedBy(INTERNAL + ".transport..")
		.layer("Protocol")
		.definedBy(INTERNAL + ".protocol..")
		.layer("Thread")
		.definedBy(INTERNAL + ".thread..")
		.layer("API types")
		.definedBy(DescribedPredicate.not(entryPoint()).and(JavaClass.Predicates.resideInAPackage(API)))
		.whereLayer("Entry points")
		.mayOnlyBeAccessedByLayers("API types")
		.whereLayer("Lease")
		.mayOnlyBeAccessedByLayers("Entry points")
		.whereLayer("Waiting")
		.mayOnlyBeAccessedByLayers("Entry points", "Lease")
		.whereLayer("Algorithm")
		.mayOnlyBeAccessedByLayers("Entry points", "Lease", "Waiting")
		.whereLayer("Quarantine")
		.mayOnlyBeAccessedByLayers("Entry points", "Lease", "Waiting", "Algorithm")
		.whereLayer("Round")
		.mayOnlyBeAccessedByLayers("Entry points", "Lease", "Waiting", "Algorithm", "Quarantine")
		.whereLayer("Transport")
		.mayOnlyBeAccessedByLayers("Entry points", "Lease", "Waiting", "Algorithm", "Quarantine", "Round")
		.whereLayer("Protocol")
		.mayOnlyBeAccessedByLayers("Entry points", "Lease", "Waiting", "Algorithm", "Quarantine", "Round", "Transport")
		.whereLayer("Thread")
		.mayOnlyBeAccessedByLayers("Entry points", "Lease", "Waiting", "Algorithm", "Quarantine", "Round", "Transport",
				"Protocol");

	@ArchTest
	static final ArchRule apiTypesUseNothingOfTheImplementation = noClasses().that(entryPoint().negate())
		.and()
		.resideInAPackage(API)
		.should()
		.dependOnClassesThat()
		.resideInAPackage(INTERNAL + "..");

	@ArchTest
	static final ArchRule implementationPackagesHaveNoCycles = slices().matching(API + ".(**)")
		.should()
		.beFreeOfCycles();

	private static DescribedPredicate<JavaClass> entryPoint() {
		return DescribedPredicate.describe("the API's entry points " + ENTRY_POINTS,
				(javaClass) -> ENTRY_POINTS.contains(topLevel(javaClass).getName()));
	}

	private static JavaClass topLevel(JavaClass javaClass) {
		JavaClass current = javaClass;
		while (current.getEnclosingClass().isPresent()) {
			current = current.getEnclosingClass().get();
		}
		return current;
	}

}
