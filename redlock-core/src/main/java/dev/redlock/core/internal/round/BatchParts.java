package dev.redlock.core.internal.round;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

import dev.redlock.core.internal.protocol.RawArgument;

/**
 * A batch of calls (renewals or releases of many leases) split by the nodes their keys
 * select: with one node per voter, one part of every call, to every node; with voters of
 * several nodes, one part per key range, each to the nodes that serve its keys, so that a
 * batch costs a round trip per key range it touches, not one per lease.
 *
 * @param indexes the calls of the part, by their index in the batch, in batch order
 * @param selection the nodes the part goes to, {@code null} for every node
 */
public record BatchParts(int[] indexes, boolean @Nullable [] selection) {

	/**
	 * Splits a batch.
	 * @param layout which nodes serve which keys
	 * @param calls the batch's calls
	 * @param key a call's lock key, as stored
	 * @return the parts, every call in exactly one
	 */
	public static <T> List<BatchParts> of(VoterLayout layout, List<T> calls, Function<T, RawArgument> key) {
		int[] all = new int[calls.size()];
		for (int call = 0; call < all.length; call++) {
			all[call] = call;
		}
		if (!layout.sharded()) {
			return List.of(new BatchParts(all, null));
		}
		List<VoterLayout.KeyRange> ranges = layout.keyRanges();
		int[] rangeOf = new int[calls.size()];
		int[] counts = new int[ranges.size()];
		for (int call = 0; call < rangeOf.length; call++) {
			rangeOf[call] = layout.keyRangeOf(key.apply(calls.get(call)).getRaw());
			counts[rangeOf[call]]++;
		}
		List<BatchParts> parts = new ArrayList<>();
		for (int range = 0; range < ranges.size(); range++) {
			if (counts[range] > 0) {
				int[] indexes = new int[counts[range]];
				int next = 0;
				for (int call = 0; call < rangeOf.length; call++) {
					if (rangeOf[call] == range) {
						indexes[next++] = call;
					}
				}
				parts.add(new BatchParts(indexes, layout.selection(ranges.get(range))));
			}
		}
		return parts;
	}

	/** The part's calls, in batch order. */
	public <T> List<T> of(List<T> calls) {
		List<T> part = new ArrayList<>(this.indexes.length);
		for (int index : this.indexes) {
			part.add(calls.get(index));
		}
		return part;
	}

}
