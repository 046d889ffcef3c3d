/**
 * The sources of the Java examples in {@code README.md} and {@code docs/}: plain classes
 * that compile, each example between {@code // tag::<name>[]} and
 * {@code // end::<name>[]}. {@code DocumentationSnippetsTests} checks that the Markdown
 * shows exactly these regions. Nothing here is run.
 */
package dev.redlock.docs;
