package dev.redlock.interceptor;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.springframework.expression.Expression;

import dev.redlock.annotation.OnLeaseLost;
import dev.redlock.annotation.OnLocked;

/**
 * The resolved attributes of one {@code @DistributedLock} method: placeholders resolved,
 * durations parsed, the key expressions and condition parsed, the fallback method found,
 * once.
 *
 * @param name lock name, for logs and metrics
 * @param keys parsed key expressions (one for {@code key}, several for {@code keys});
 * empty to lock the name itself
 * @param keySources the key expressions as written, for error messages
 * @param condition parsed condition, or {@code null} to lock on every call
 * @param conditionSource the condition as written, empty when there is none
 * @param ttl time-to-live, or {@code null} for the configured default
 * @param waitTime wait time, or {@code null} for the configured default
 * @param method the most specific method, whose parameter names the expressions use
 * @param description the method as {@code SimpleClassName.method(ParamType, …)}, for
 * messages
 * @param autoRenew whether to renew the lease while the method runs, or {@code null} for
 * the configured default
 * @param maxHold longest time a renewed lease is kept alive, or {@code null} for the
 * configured default
 * @param onLeaseLost what to do when the method returns after its lease was lost
 * @param onLocked what to do when the lock cannot be acquired
 * @param fallback the method to run instead when {@code onLocked} is
 * {@link OnLocked#FALLBACK}, else {@code null}
 * @param minHold least time the lock stays taken after acquisition, or {@code null} for
 * none
 * @param asynchronous whether the method returns a {@code CompletionStage}, whose
 * completion ends the call
 * @param reactive whether the method returns a reactive type (with Reactor present),
 * locked per subscription
 * @param fencing whether the locks come with fencing tokens
 */
record LockAttributes(String name, List<Expression> keys, List<String> keySources, @Nullable Expression condition,
		String conditionSource, @Nullable Duration ttl, @Nullable Duration waitTime, Method method, String description,
		@Nullable Boolean autoRenew, @Nullable Duration maxHold, OnLeaseLost onLeaseLost, OnLocked onLocked,
		@Nullable Method fallback, @Nullable Duration minHold, boolean asynchronous, boolean reactive,
		boolean fencing) {

	/**
	 * Returns the only key expression, for a method with one {@code key}.
	 * @return the expression, or {@code null} when the method locks its name or several
	 * keys
	 */
	@Nullable Expression key() {
		return (this.keys.size() == 1) ? this.keys.get(0) : null;
	}

	/**
	 * Returns the key expressions as written.
	 * @return one expression, or several joined with {@code ", "}; empty when the method
	 * locks its name
	 */
	String keySource() {
		return String.join(", ", this.keySources);
	}

}
