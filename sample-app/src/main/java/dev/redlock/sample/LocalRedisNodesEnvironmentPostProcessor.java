package dev.redlock.sample;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.redlock.test.RedisNodes;
import org.apache.commons.logging.Log;

import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.context.event.ApplicationFailedEvent;
import org.springframework.boot.context.event.ApplicationPreparedEvent;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.logging.DeferredLogFactory;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.event.ContextClosedEvent;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Zero setup: when {@code redlock.nodes} is not configured, starts three local Redis
 * nodes for the locks and a fourth for the shop's stock (real {@code redis-server}
 * processes on loopback, from the {@code redlock-test} kit) and points
 * {@code redlock.nodes} at them. The nodes stop when the application context closes, or
 * at the latest when the JVM exits.
 *
 * <p>
 * Configure {@code redlock.nodes} (or set {@code redlock.enabled=false}) and nothing is
 * started. Registered in {@code META-INF/spring.factories}; runs after the configuration
 * files and the command line have been read.
 */
public class LocalRedisNodesEnvironmentPostProcessor implements EnvironmentPostProcessor, Ordered {

	static final String PROPERTY_SOURCE_NAME = "localRedisNodes";

	/** Redis nodes for the locks. */
	static final int LOCK_NODE_COUNT = 3;

	static final String BEAN_NAME = "localRedisNodes";

	private final Log logger;

	public LocalRedisNodesEnvironmentPostProcessor(DeferredLogFactory logFactory) {
		this.logger = logFactory.getLog(LocalRedisNodesEnvironmentPostProcessor.class);
	}

	@Override
	public int getOrder() {
		// after ConfigDataEnvironmentPostProcessor, so application.yml and
		// --redlock.nodes=... are visible
		return Ordered.LOWEST_PRECEDENCE;
	}

	@Override
	public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
		if (environment.getPropertySources().contains(PROPERTY_SOURCE_NAME) || !wanted(environment)) {
			return;
		}
		// one more node for the shop's stock, so that killing a lock node in the demo
		// leaves the data alone
		RedisNodes nodes = RedisNodes.start(LOCK_NODE_COUNT + 1);
		List<String> uris = nodes.uris().subList(0, LOCK_NODE_COUNT);
		String stockUri = nodes.uris().get(LOCK_NODE_COUNT);
		Map<String, Object> properties = new LinkedHashMap<>();
		for (int i = 0; i < uris.size(); i++) {
			properties.put("redlock.nodes[" + i + "]", uris.get(i));
		}
		// nodes started a moment ago hold nobody's locks; the quarantine would keep them
		// from counting for a minute
		properties.put("redlock.restart-quarantine", "0s");
		properties.put("shop.redis-uri", stockUri);
		environment.getPropertySources().addLast(new MapPropertySource(PROPERTY_SOURCE_NAME, properties));
		application.addListeners(new StopNodesOnClose(nodes));
		this.logger.info("Started " + uris.size() + " local Redis nodes for Redlock: " + uris + ", and " + stockUri
				+ " for the shop's stock (set redlock.nodes to use your own)");
	}

	private static boolean wanted(ConfigurableEnvironment environment) {
		Binder binder = Binder.get(environment);
		boolean enabled = binder.bind("redlock.enabled", Boolean.class).orElse(true);
		boolean configured = !binder.bind("redlock.nodes", Bindable.listOf(String.class)).orElse(List.of()).isEmpty();
		return enabled && !configured;
	}

	/**
	 * Ties the nodes to the application they were started for. They become a bean of its
	 * context, so they stop when it closes, after the beans that use them (the Redlock
	 * and the shop's Redis client) have been destroyed and the web server has finished
	 * its requests. If the application fails to start, they stop at once.
	 */
	private static final class StopNodesOnClose implements ApplicationListener<ApplicationEvent> {

		private final RedisNodes nodes;

		private boolean registered;

		StopNodesOnClose(RedisNodes nodes) {
			this.nodes = nodes;
		}

		@Override
		public void onApplicationEvent(ApplicationEvent event) {
			if (event instanceof ApplicationPreparedEvent prepared && !this.registered
					&& prepared.getApplicationContext() instanceof GenericApplicationContext context) {
				// the first disposable singleton of the context, so the last one
				// destroyed
				DefaultListableBeanFactory beanFactory = context.getDefaultListableBeanFactory();
				beanFactory.registerSingleton(BEAN_NAME, this.nodes);
				beanFactory.registerDisposableBean(BEAN_NAME, this.nodes::close);
				this.registered = true;
			}
			else if (event instanceof ApplicationFailedEvent
					|| (event instanceof ContextClosedEvent && !this.registered)) {
				stop();
			}
		}

		private void stop() {
			try {
				this.nodes.close();
			}
			catch (Exception ex) {
				// the JVM shutdown hook of RedisNodes gets another chance
			}
		}

	}

}
