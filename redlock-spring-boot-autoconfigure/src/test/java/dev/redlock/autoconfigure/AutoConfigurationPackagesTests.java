package dev.redlock.autoconfigure;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;
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
class AutoConfigurationPackagesTests {

	private final JavaClasses classes = new ClassFileImporter()
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.importPackages("dev.redlock");

	@Test
	void autoConfigurationPackagesHoldOnlyWiring() {
		classes().that()
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
			.haveSimpleNameEndingWith("PropertyException")
			.check(this.classes);
	}

	@Test
	void runtimeClassesKnowNothingOfTheWiring() {
		noClasses().that()
			.resideInAnyPackage("dev.redlock.metrics..", "dev.redlock.health..", "dev.redlock.endpoint..",
					"dev.redlock.integration..", "dev.redlock.shedlock..", "dev.redlock.observation..",
					"dev.redlock.interceptor..", "dev.redlock.annotation..")
			.should()
			.dependOnClassesThat()
			.resideInAPackage("dev.redlock.autoconfigure..")
			.check(this.classes);
	}

}
