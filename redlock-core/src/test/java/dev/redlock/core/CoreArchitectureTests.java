package dev.redlock.core;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

class CoreArchitectureTests {

	private final JavaClasses core = new ClassFileImporter()
		.withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
		.importPackages("dev.redlock.core");

	@Test
	void coreDependsOnNothingOfSpring() {
		noClasses().that()
			.resideInAPackage("dev.redlock.core..")
			.should()
			.dependOnClassesThat()
			.resideInAnyPackage("org.springframework..")
			.check(this.core);
	}

}
