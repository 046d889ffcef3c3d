/**
 * A Spring Integration lock registry on Redlock.
 */
@NullMarked
package dev.redlock.autoconfigure.integration;

import org.jspecify.annotations.NullMarked;
