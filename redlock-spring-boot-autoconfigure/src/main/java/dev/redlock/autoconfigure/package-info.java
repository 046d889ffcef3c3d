/**
 * Spring Boot auto-configuration of Redlock.
 */
@NullMarked
package dev.redlock.autoconfigure;

import org.jspecify.annotations.NullMarked;
