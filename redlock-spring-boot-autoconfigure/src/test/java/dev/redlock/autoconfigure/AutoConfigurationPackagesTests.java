package dev.redlock.autoconfigure;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.context.properties.ConfigurationProperties;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * The auto-configuration packages hold only wiring: auto-configurations, properties, the
 * factory that turns properties into a {@code Redlock}, the registrar of the annotation's
 * proxies and the failure analyzer. The runtime classes a user may also use by hand
 * (meters, health, endpoint, adapters, observation) live in packages named for their job,
 * which know nothing of the wiring.
 */
@AnalyzeClasses(packages = "dev.redlock", importOptions = ImportOption.DoNotIncludeTests.class)
class AutoConfigurationPackagesTests {

	@ArchTest
	static final ArchRule autoConfigurationPackagesHoldOnlyWiring = classes().that()
		.resideInAPackage("dev.redlock.autoconfigure..")
		.and()
		.areTopLevelClasses()
		.and()
		.doNotHaveSimpleName("package-info")
		.should()
		.beAnnotatedWith(AutoConfiguration.class)
		.orShould()
		.beAnnotatedWith(ConfigurationProperties.class)
		.orShould()
		.haveSimpleNameEndingWith("Factory")
		.orShould()
		.haveSimpleNameEndingWith("Registrar")
		.orShould()
		.haveSimpleNameEndingWith("FailureAnalyzer")
		.orShould()
		.haveSimpleNameEndingWith("PropertyException");

	@ArchTest
	static final ArchRule runtimeClassesKnowNothingOfTheWiring = noClasses().that()
		.resideInAnyPackage("dev.redlock.metrics..", "dev.redlock.health..", "dev.redlock.endpoint..",
				"dev.redlock.integration..", "dev.redlock.shedlock..", "dev.redlock.observation..",
				"dev.redlock.interceptor..", "dev.redlock.annotation..")
		.should()
		.dependOnClassesThat()
		.resideInAPackage("dev.redlock.autoconfigure..");

}
