package dev.redlock.autoconfigure;

import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * What is built on the core (the auto-configuration, the interceptor, meters, health, the
 * test kit; their tests included) uses it through its API only: what lives in
 * {@code dev.redlock.core.internal} may change without notice.
 */
@AnalyzeClasses(packages = "dev.redlock")
class CoreApiOnlyTests {

	@ArchTest
	static final ArchRule nothingUsesTheCoreImplementation = noClasses().that()
		.resideOutsideOfPackage("dev.redlock.core..")
		.should()
		.dependOnClassesThat()
		.resideInAPackage("dev.redlock.core.internal..");

}
