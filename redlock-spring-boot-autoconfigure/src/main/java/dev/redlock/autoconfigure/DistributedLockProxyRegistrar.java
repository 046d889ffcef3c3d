package dev.redlock.autoconfigure;

import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.context.EnvironmentAware;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;

/**
 * Makes sure an auto-proxy creator exists so {@code @DistributedLock} methods are
 * intercepted even where Spring Boot's AOP auto-configuration is off. Follows
 * {@code spring.aop.proxy-target-class} (class proxies by default).
 */
class DistributedLockProxyRegistrar implements ImportBeanDefinitionRegistrar, EnvironmentAware {

	private Environment environment;

	@Override
	public void setEnvironment(Environment environment) {
		this.environment = environment;
	}

	@Override
	public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
		AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
		if (this.environment.getProperty("spring.aop.proxy-target-class", Boolean.class, true)) {
			AopConfigUtils.forceAutoProxyCreatorToUseClassProxying(registry);
		}
	}

}
