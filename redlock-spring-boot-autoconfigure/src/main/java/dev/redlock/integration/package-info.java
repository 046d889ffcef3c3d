/**
 * A Spring Integration lock registry on Redlock.
 */
@NullMarked
package dev.redlock.integration;

import org.jspecify.annotations.NullMarked;
