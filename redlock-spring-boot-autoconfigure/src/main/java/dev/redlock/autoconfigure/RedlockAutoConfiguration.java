package dev.redlock.autoconfigure;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.beans.factory.config.EmbeddedValueResolver;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.ssl.SslBundles;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportRuntimeHints;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.util.function.SingletonSupplier;

import dev.redlock.aot.DistributedLockRuntimeHints;
import dev.redlock.core.Redlock;
import dev.redlock.core.RedlockListener;
import dev.redlock.interceptor.DistributedLockAdvisor;
import dev.redlock.interceptor.DistributedLockInterceptor;
import dev.redlock.interceptor.LockAttributeSource;
import dev.redlock.interceptor.LockObserver;

/**
 * Auto-configuration of a {@link Redlock} from {@code redlock.*} properties, and of the
 * interception of {@link dev.redlock.annotation.DistributedLock @DistributedLock}
 * methods. Every bean backs off when the application defines its own;
 * {@code redlock.enabled=false} turns it all off. Every {@link RedlockListener} bean is
 * told about the locks' work (metrics are one such listener); a {@link LockObserver}
 * bean, if there is one, observes each annotated call (tracing is one such observer).
 */
@AutoConfiguration(afterName = { "org.springframework.boot.autoconfigure.aop.AopAutoConfiguration",
		"org.springframework.boot.autoconfigure.ssl.SslAutoConfiguration" })
@ConditionalOnClass(Redlock.class)
@ConditionalOnBooleanProperty(name = "redlock.enabled", matchIfMissing = true)
@EnableConfigurationProperties(RedlockProperties.class)
@Import(DistributedLockProxyRegistrar.class)
@ImportRuntimeHints(DistributedLockRuntimeHints.class)
public final class RedlockAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	Redlock redlock(RedlockProperties properties, ObjectProvider<RedlockListener> listeners,
			ObjectProvider<SslBundles> sslBundles) {
		return RedlockFactory.create(properties, listeners.orderedStream().toList(), sslBundles.getIfAvailable());
	}

	@Bean
	@ConditionalOnMissingBean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static LockAttributeSource redlockLockAttributeSource(ConfigurableBeanFactory beanFactory) {
		return new LockAttributeSource(new EmbeddedValueResolver(beanFactory));
	}

	@Bean
	@ConditionalOnMissingBean
	DistributedLockAttributeCheck distributedLockAttributeCheck(ObjectProvider<Redlock> redlock,
			LockAttributeSource redlockLockAttributeSource) {
		return new DistributedLockAttributeCheck(redlock, redlockLockAttributeSource);
	}

	@Bean
	@ConditionalOnMissingBean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static DistributedLockAdvisor distributedLockAdvisor(ObjectProvider<Redlock> redlock,
			LockAttributeSource redlockLockAttributeSource, ConfigurableBeanFactory beanFactory,
			Environment environment, ObjectProvider<LockObserver> lockObserver) {
		// both are looked up on the first call, not now (they may need beans, such as an
		// ObservationRegistry, that must not be created before all post-processors are in
		// place), and then kept: a lookup per call would cost more than the interceptor
		// itself
		DistributedLockInterceptor interceptor = new DistributedLockInterceptor(
				SingletonSupplier.of(redlock::getObject), redlockLockAttributeSource, beanFactory,
				SingletonSupplier.of(() -> lockObserver.getIfUnique(() -> LockObserver.NONE)));
		// read from the environment: advisors are created while post-processors are still
		// being set up, too early
		// to create the RedlockProperties bean
		int order = Binder.get(environment)
			.bind("redlock.interceptor-order", Integer.class)
			.orElse(RedlockProperties.DEFAULT_INTERCEPTOR_ORDER);
		return new DistributedLockAdvisor(interceptor, redlockLockAttributeSource, order);
	}

	/**
	 * Checks every {@code @DistributedLock} method against the settings of the
	 * {@link Redlock} once all singletons exist, so that a {@code ttl} or {@code minHold}
	 * that the settings cannot serve fails startup, naming the method, rather than every
	 * call.
	 */
	static final class DistributedLockAttributeCheck implements SmartInitializingSingleton {

		private final ObjectProvider<Redlock> redlock;

		private final LockAttributeSource attributeSource;

		DistributedLockAttributeCheck(ObjectProvider<Redlock> redlock, LockAttributeSource attributeSource) {
			this.redlock = redlock;
			this.attributeSource = attributeSource;
		}

		@Override
		public void afterSingletonsInstantiated() {
			Redlock redlock = this.redlock.getIfUnique();
			if (redlock != null) {
				this.attributeSource.checkAgainst(redlock.settings());
			}
		}

	}

}
