/**
 * The {@code redlock} Actuator endpoint, and the masking of node credentials in
 * Actuator's {@code env} and {@code configprops} endpoints.
 */
@NullMarked
package dev.redlock.endpoint;

import org.jspecify.annotations.NullMarked;
