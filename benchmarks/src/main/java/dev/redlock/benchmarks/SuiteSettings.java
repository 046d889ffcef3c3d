package dev.redlock.benchmarks;

import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The iterations and forks every benchmark of the suite runs with, in one place: JMH
 * reads these annotations from the superclass of each benchmark class, which adds its own
 * mode, time unit and thread count.
 */
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(1)
public abstract class SuiteSettings {

}
