package dev.redlock.core;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

@AnalyzeClasses(packages = "dev.redlock.core", importOptions = ImportOption.DoNotIncludeTests.class)
class CoreArchitectureTests {

	@ArchTest
	static final ArchRule coreDependsOnNothingOfSpring = noClasses().that()
		.resideInAPackage("dev.redlock.core..")
		.should()
		.dependOnClassesThat()
		.resideInAnyPackage("org.springframework..");

}
