package dev.redlock.sample;

import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * The sample, its tests included, uses the core through its API only: what lives in
 * {@code dev.redlock.core.internal} may change without notice.
 */
@AnalyzeClasses(packages = "dev.redlock.sample")
class CoreApiOnlyTests {

	@ArchTest
	static final ArchRule nothingUsesTheCoreImplementation = noClasses().should()
		.dependOnClassesThat()
		.resideInAPackage("dev.redlock.core.internal..");

}
