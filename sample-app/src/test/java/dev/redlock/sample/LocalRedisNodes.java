package dev.redlock.sample;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.redlock.test.RedisNodes;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.config.BeanFactoryPostProcessor;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.EnvironmentAware;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.Environment;
import org.springframework.core.env.MapPropertySource;

/**
 * Zero setup for development and the sample's tests: when {@code redlock.nodes} is not
 * configured, starts three local Redis nodes for the locks and a fourth for the shop's
 * stock (real {@code redis-server} processes on loopback, from the {@code redlock-test}
 * kit), points {@code redlock.nodes} and {@code shop.redis-uri} at them and registers
 * them as the bean {@value #BEAN_NAME}. It runs before any bean that reads those
 * properties is created. The nodes stop when the application context closes, after the
 * beans that use them; at the latest when the JVM exits.
 *
 * <p>
 * Configure {@code redlock.nodes} (or set {@code redlock.enabled=false}) and nothing is
 * started. Declared by {@link LocalRedisNodesConfiguration}.
 */
final class LocalRedisNodes implements BeanFactoryPostProcessor, EnvironmentAware, DisposableBean {

	static final String PROPERTY_SOURCE_NAME = "localRedisNodes";

	/** Redis nodes for the locks. */
	static final int LOCK_NODE_COUNT = 3;

	static final String BEAN_NAME = "localRedisNodes";

	private static final Log logger = LogFactory.getLog(LocalRedisNodes.class);

	private ConfigurableEnvironment environment;

	private RedisNodes nodes;

	@Override
	public void setEnvironment(Environment environment) {
		this.environment = (ConfigurableEnvironment) environment;
	}

	@Override
	public void postProcessBeanFactory(ConfigurableListableBeanFactory beanFactory) {
		if (this.environment.getPropertySources().contains(PROPERTY_SOURCE_NAME) || !wanted(this.environment)) {
			return;
		}
		// one more node for the shop's stock, so that killing a lock node in the demo
		// leaves the data alone
		this.nodes = RedisNodes.start(LOCK_NODE_COUNT + 1);
		List<String> uris = this.nodes.uris().subList(0, LOCK_NODE_COUNT);
		String stockUri = this.nodes.uris().get(LOCK_NODE_COUNT);
		Map<String, Object> properties = new LinkedHashMap<>();
		for (int i = 0; i < uris.size(); i++) {
			properties.put("redlock.nodes[" + i + "]", uris.get(i));
		}
		// nodes started a moment ago hold nobody's locks; the quarantine would keep them
		// from counting for a minute
		properties.put("redlock.restart-quarantine", "0s");
		properties.put("shop.redis-uri", stockUri);
		this.environment.getPropertySources().addLast(new MapPropertySource(PROPERTY_SOURCE_NAME, properties));
		beanFactory.registerSingleton(BEAN_NAME, this.nodes);
		logger.info("Started " + uris.size() + " local Redis nodes for Redlock: " + uris + ", and " + stockUri
				+ " for the shop's stock (set redlock.nodes to use your own)");
	}

	/**
	 * Stops the nodes. This bean is created before every ordinary bean, so it is
	 * destroyed after them: after the Redlock and the shop's Redis client, and after the
	 * web server has finished its requests.
	 */
	@Override
	public void destroy() {
		if (this.nodes != null) {
			this.nodes.close();
		}
	}

	private static boolean wanted(ConfigurableEnvironment environment) {
		Binder binder = Binder.get(environment);
		boolean enabled = binder.bind("redlock.enabled", Boolean.class).orElse(true);
		boolean configured = !binder.bind("redlock.nodes", Bindable.listOf(String.class)).orElse(List.of()).isEmpty();
		return enabled && !configured;
	}

}
