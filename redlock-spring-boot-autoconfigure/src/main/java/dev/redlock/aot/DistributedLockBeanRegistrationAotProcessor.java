package dev.redlock.aot;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import org.springframework.aot.generate.GenerationContext;
import org.springframework.aot.hint.ExecutableMode;
import org.springframework.aot.hint.ReflectionHints;
import org.springframework.beans.factory.aot.BeanRegistrationAotContribution;
import org.springframework.beans.factory.aot.BeanRegistrationAotProcessor;
import org.springframework.beans.factory.aot.BeanRegistrationCode;
import org.springframework.beans.factory.support.RegisteredBean;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

import dev.redlock.annotation.DistributedLock;
import dev.redlock.annotation.OnLocked;

/**
 * Registers, for each bean with {@code @DistributedLock} methods (on the class, a
 * superclass or an interface), what the interceptor reads or calls by reflection: the
 * annotated methods (annotation and parameter names, introspected), their fallback
 * methods (invoked, public or not, on the class or a superclass), and the array types an
 * {@link OnLocked#SKIP} method returns empty. Without these a native image would work
 * only where a class proxy happened to register the methods.
 */
class DistributedLockBeanRegistrationAotProcessor implements BeanRegistrationAotProcessor {

	@Override
	public @Nullable BeanRegistrationAotContribution processAheadOfTime(RegisteredBean registeredBean) {
		Class<?> beanClass = ClassUtils.getUserClass(registeredBean.getBeanClass());
		List<Method> locked = lockedMethods(beanClass);
		return locked.isEmpty() ? null : new Contribution(beanClass, locked);
	}

	/**
	 * The methods of the class, its superclasses and interfaces that carry the
	 * annotation.
	 */
	static List<Method> lockedMethods(Class<?> beanClass) {
		Set<Class<?>> types = new LinkedHashSet<>(ClassUtils.getAllInterfacesForClassAsSet(beanClass));
		for (Class<?> type = beanClass; type != null && type != Object.class; type = type.getSuperclass()) {
			types.add(type);
		}
		List<Method> locked = new ArrayList<>();
		for (Class<?> type : types) {
			for (Method method : type.getDeclaredMethods()) {
				if (AnnotatedElementUtils.hasAnnotation(method, DistributedLock.class)) {
					locked.add(method);
				}
			}
		}
		return locked;
	}

	/** The hints of one bean's locked methods. */
	private static final class Contribution implements BeanRegistrationAotContribution {

		private final Class<?> beanClass;

		private final List<Method> locked;

		Contribution(Class<?> beanClass, List<Method> locked) {
			this.beanClass = beanClass;
			this.locked = locked;
		}

		@Override
		public void applyTo(GenerationContext generationContext, BeanRegistrationCode beanRegistrationCode) {
			ReflectionHints reflection = generationContext.getRuntimeHints().reflection();
			for (Method method : this.locked) {
				reflection.registerMethod(method, ExecutableMode.INTROSPECT);
				DistributedLock annotation = AnnotatedElementUtils.findMergedAnnotation(method, DistributedLock.class);
				if (annotation == null) {
					continue;
				}
				Method fallback = fallback(annotation, method);
				if (fallback != null) {
					reflection.registerMethod(fallback, ExecutableMode.INVOKE);
				}
				if (annotation.onLocked() == OnLocked.SKIP && method.getReturnType().isArray()) {
					reflection.registerType(method.getReturnType());
				}
			}
		}

		private @Nullable Method fallback(DistributedLock annotation, Method method) {
			String name = annotation.fallback().trim();
			if (annotation.onLocked() != OnLocked.FALLBACK || name.isEmpty()) {
				return null;
			}
			return ReflectionUtils.findMethod(this.beanClass, name, method.getParameterTypes());
		}

	}

}
