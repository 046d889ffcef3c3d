package dev.redlock.aot;

import java.lang.reflect.Method;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.aot.generate.ClassNameGenerator;
import org.springframework.aot.generate.DefaultGenerationContext;
import org.springframework.aot.generate.InMemoryGeneratedFiles;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.TypeReference;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.beans.factory.aot.BeanRegistrationAotContribution;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.beans.factory.support.RegisteredBean;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.javapoet.ClassName;

import dev.redlock.Payments;
import dev.redlock.annotation.DistributedLock;
import dev.redlock.annotation.OnLocked;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The hints each locked bean gets: its locked methods, their fallbacks and the arrays a
 * skipped call returns.
 */
class DistributedLockBeanRegistrationAotProcessorTests {

	private final DistributedLockBeanRegistrationAotProcessor processor = new DistributedLockBeanRegistrationAotProcessor();

	@Test
	void aBeanWithoutLockedMethodsContributesNothing() {
		assertThat(contribution(Plain.class)).isNull();
	}

	@Test
	void lockedMethodsAreIntrospected() throws Exception {
		RuntimeHints hints = hintsFor(Orders.class);
		Method ship = Orders.class.getDeclaredMethod("ship", String.class);
		assertThat(RuntimeHintsPredicates.reflection().onMethod(ship).introspect()).accepts(hints);
	}

	@Test
	void lockedInterfaceMethodsAreIntrospected() throws Exception {
		RuntimeHints hints = hintsFor(Payments.ByCard.class);
		Method pay = Payments.class.getDeclaredMethod("pay", String.class);
		assertThat(RuntimeHintsPredicates.reflection().onMethod(pay).introspect()).accepts(hints);
	}

	@Test
	void fallbacksAreInvokableEvenNonPublicInASuperclass() throws Exception {
		RuntimeHints hints = hintsFor(Orders.class);
		Method fallback = BaseOrders.class.getDeclaredMethod("shipLater", String.class);
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(fallback)).accepts(hints);
	}

	@Test
	void arraysOfSkippedMethodsCanBeCreated() {
		RuntimeHints hints = hintsFor(Orders.class);
		assertThat(RuntimeHintsPredicates.reflection().onType(TypeReference.of(String[].class))).accepts(hints);
	}

	private @Nullable BeanRegistrationAotContribution contribution(Class<?> beanClass) {
		DefaultListableBeanFactory beanFactory = new DefaultListableBeanFactory();
		beanFactory.registerBeanDefinition("bean", new RootBeanDefinition(beanClass));
		return this.processor.processAheadOfTime(RegisteredBean.of(beanFactory, "bean"));
	}

	private RuntimeHints hintsFor(Class<?> beanClass) {
		BeanRegistrationAotContribution contribution = contribution(beanClass);
		assertThat(contribution).as("contribution for %s", beanClass.getSimpleName()).isNotNull();
		DefaultGenerationContext generation = new DefaultGenerationContext(
				new ClassNameGenerator(ClassName.get(getClass())), new InMemoryGeneratedFiles());
		contribution.applyTo(generation, null);
		return generation.getRuntimeHints();
	}

	static class Plain {

		void work() {
		}

	}

	static class BaseOrders {

		@SuppressWarnings("unused")
		private String shipLater(String order) {
			return "later";
		}

	}

	static class Orders extends BaseOrders {

		@DistributedLock(key = "#order", onLocked = OnLocked.FALLBACK, fallback = "shipLater")
		public String ship(String order) {
			return "shipped";
		}

		@DistributedLock(key = "'all'", onLocked = OnLocked.SKIP)
		public String[] list() {
			return new String[0];
		}

	}

}
